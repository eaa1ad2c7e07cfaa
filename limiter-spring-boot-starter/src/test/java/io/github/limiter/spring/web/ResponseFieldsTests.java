package io.github.limiter.spring.web;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;

import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Import;
import org.springframework.stereotype.Service;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

import io.github.limiter.algorithm.Algorithm;
import io.github.limiter.spring.annotation.RateLimit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Which limit the response fields of a Spring MVC request describe: the handler's. A limited service called by the
 * handler leaves them alone while it admits; when it rejects, the 429 carries one pair of fields, the rejecting
 * limit's. And a key that is too long is a 400 that says so and shows the client nothing of the server.
 */
@SpringBootTest(classes = ResponseFieldsTests.Application.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
		properties = { "limiter.backend=local", "spring.main.web-application-type=servlet" })
class ResponseFieldsTests {

	@LocalServerPort
	int port;

	private final HttpClient http = HttpClient.newHttpClient();

	private HttpResponse<String> get(String path) throws Exception {
		return this.http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + this.port + path)).build(),
				HttpResponse.BodyHandlers.ofString());
	}

	@Test
	void anUnlimitedHandlerCallingALimitedServiceAnswersWithoutFields() throws Exception {
		HttpResponse<String> response = get("/unlimited");
		assertThat(response.statusCode()).isEqualTo(200);
		assertThat(response.headers().allValues("RateLimit-Policy")).isEmpty();
		assertThat(response.headers().allValues("RateLimit")).isEmpty();
	}

	@Test
	void aLimitedHandlerCallingALimitedServiceDescribesItsOwnLimit() throws Exception {
		HttpResponse<String> response = get("/limited");
		assertThat(response.statusCode()).isEqualTo(200);
		assertThat(response.headers().allValues("RateLimit-Policy")).containsExactly("\"handler\";q=100;w=60");
		assertThat(response.headers().allValues("RateLimit")).singleElement()
			.satisfies(value -> assertThat(value).startsWith("\"handler\";r=99;t="));
	}

	@Test
	void aRejectionByTheServiceCarriesOnePairOfFieldsOfTheRejectingLimit() throws Exception {
		assertThat(get("/tight").statusCode()).isEqualTo(200);
		HttpResponse<String> rejected = get("/tight");
		assertThat(rejected.statusCode()).isEqualTo(429);
		assertThat(rejected.headers().allValues("RateLimit-Policy")).containsExactly("\"tight-service\";q=1;w=60");
		assertThat(rejected.headers().allValues("RateLimit")).hasSize(1)
			.allSatisfy(value -> assertThat(value).startsWith("\"tight-service\";r=0;t="));
	}

	@Test
	void aKeyTooLongIsABadRequestThatShowsNoInternals() throws Exception {
		HttpResponse<String> response = get("/search?q=" + "x".repeat(5000));
		assertThat(response.statusCode()).isEqualTo(400);
		assertThat(response.body()).contains("\"title\":\"Rate limit key too long\"")
			.contains("5000 characters long; at most 4096")
			.doesNotContain("search-limit", "#q", "Controller", "search(");
	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	@Import({ Controller.class, Inventory.class })
	static class Application {

	}

	@Service
	static class Inventory {

		@RateLimit(name = "service", max = "1000", window = "1m", algorithm = Algorithm.FIXED_WINDOW)
		public String count() {
			return "42";
		}

		// Without boundaries: an epoch-aligned fixed window would start afresh at a minute boundary between the calls.
		@RateLimit(name = "tight-service", max = "1", window = "1m", algorithm = Algorithm.SLIDING_WINDOW_LOG)
		public String tight() {
			return "1";
		}

	}

	@RestController
	static class Controller {

		private final Inventory inventory;

		Controller(Inventory inventory) {
			this.inventory = inventory;
		}

		@GetMapping("/unlimited")
		public String unlimited() {
			return this.inventory.count();
		}

		@GetMapping("/limited")
		@RateLimit(name = "handler", max = "100", window = "1m", algorithm = Algorithm.FIXED_WINDOW)
		public String limited() {
			return this.inventory.count();
		}

		@GetMapping("/tight")
		@RateLimit(name = "tight-handler", max = "100", window = "1m", algorithm = Algorithm.FIXED_WINDOW)
		public String tight() {
			return this.inventory.tight();
		}

		@GetMapping("/search")
		@RateLimit(name = "search-limit", key = "#q", max = "100", window = "1m")
		public String search(@RequestParam String q) {
			return "found";
		}

	}

}
