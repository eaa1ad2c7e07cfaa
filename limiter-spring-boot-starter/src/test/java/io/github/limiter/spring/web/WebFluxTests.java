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
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

import io.github.limiter.spring.annotation.RateLimit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A WebFlux controller gets the same 429 answer as a Spring MVC one.
 */
@SpringBootTest(classes = WebFluxTests.Application.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
		properties = { "spring.main.web-application-type=reactive", "limiter.backend=local" })
class WebFluxTests {

	@LocalServerPort
	int port;

	@Test
	void aRejectedCallIsATooManyRequestsProblem() throws Exception {
		HttpClient http = HttpClient.newHttpClient();
		HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + this.port + "/flux")).build();
		assertThat(http.send(request, HttpResponse.BodyHandlers.ofString()).statusCode()).isEqualTo(200);
		HttpResponse<String> limited = http.send(request, HttpResponse.BodyHandlers.ofString());
		assertThat(limited.statusCode()).isEqualTo(429);
		assertThat(limited.headers().firstValue("Content-Type")).hasValue("application/problem+json");
		// The one permit of the minute leaves the window a minute after it was taken.
		assertThat(Long.parseLong(limited.headers().firstValue("Retry-After").orElseThrow())).isBetween(1L, 60L);
		assertThat(limited.headers().firstValue("RateLimit-Policy")).hasValue("\"flux\";q=1;w=60");
		assertThat(limited.body()).contains("\"status\":429").contains("\"limit\":\"flux\"");
	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	@Import(Controller.class)
	static class Application {

	}

	@RestController
	static class Controller {

		@GetMapping("/flux")
		// Without boundaries: an epoch-aligned fixed window would start afresh at a minute boundary between the calls.
		@RateLimit(name = "flux", max = "1", window = "1m",
				algorithm = io.github.limiter.algorithm.Algorithm.SLIDING_WINDOW_LOG)
		public String flux() {
			return "ok";
		}

	}

}
