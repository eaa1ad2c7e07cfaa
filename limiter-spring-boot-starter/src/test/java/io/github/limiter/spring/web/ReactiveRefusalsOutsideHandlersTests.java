package io.github.limiter.spring.web;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;

import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.core.annotation.Order;
import org.springframework.stereotype.Service;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.reactive.function.server.RouterFunction;
import org.springframework.web.reactive.function.server.RouterFunctions;
import org.springframework.web.reactive.function.server.ServerResponse;
import org.springframework.web.server.WebFilter;
import reactor.core.publisher.Mono;

import io.github.limiter.algorithm.Algorithm;
import io.github.limiter.spring.annotation.RateLimit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * On WebFlux, a limited method that a {@code WebFilter} calls (as Spring Security's chain calls a
 * {@code ReactiveUserDetailsService}), and one whose plain value a functional endpoint's handler function needs before
 * it can return, are refused with the same 429 as a limited handler, not Spring Boot's 500.
 */
@SpringBootTest(classes = ReactiveRefusalsOutsideHandlersTests.Application.class,
		webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
		properties = { "spring.main.web-application-type=reactive", "limiter.backend=local",
				"limiter.empty-key=reject" })
class ReactiveRefusalsOutsideHandlersTests {

	@LocalServerPort
	int port;

	private final HttpClient http = HttpClient.newHttpClient();

	private HttpResponse<String> get(String path) throws IOException, InterruptedException {
		return this.http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + this.port + path)).build(),
				HttpResponse.BodyHandlers.ofString());
	}

	@Test
	void aRefusalInAWebFilterIsTheLimitersTooManyRequests() throws Exception {
		assertThat(get("/gated/hello?user=ann").body()).isEqualTo("hello");
		HttpResponse<String> refused = get("/gated/hello?user=ann");
		assertThat(refused.statusCode()).isEqualTo(429);
		assertThat(refused.headers().firstValue("Content-Type")).hasValue("application/problem+json");
		assertThat(Long.parseLong(refused.headers().firstValue("Retry-After").orElseThrow())).isBetween(1L, 60L);
		assertThat(refused.headers().allValues("RateLimit-Policy")).containsExactly("\"gate\";q=1;w=60");
		assertThat(refused.headers().allValues("RateLimit")).hasSize(1)
			.allSatisfy((field) -> assertThat(field).startsWith("\"gate\";r=0;t="));
		assertThat(ServletRefusalsOutsideHandlersTests.members(refused.body())).containsEntry("status", "429")
			.containsEntry("title", "\"Too Many Requests\"")
			.containsEntry("instance", "\"/gated/hello\"")
			.containsEntry("limit", "\"gate\"")
			.containsKeys("detail", "retryAfterSeconds");
		assertThat(get("/gated/hello?user=bob").statusCode()).as("another key has its own permit").isEqualTo(200);
	}

	@Test
	void aKeyThatCannotBeUsedInAWebFilterIsTheLimitersBadRequest() throws Exception {
		HttpResponse<String> response = get("/gated/hello");
		assertThat(response.statusCode()).isEqualTo(400);
		assertThat(response.body()).contains("\"title\":\"Rate limit key missing\"").contains("\"status\":400");
	}

	@Test
	void aFunctionalEndpointsPlainValueRefusedIsTheLimitersTooManyRequests() throws Exception {
		HttpResponse<String> admitted = get("/functional");
		assertThat(admitted.statusCode()).isEqualTo(200);
		assertThat(admitted.body()).isEqualTo("plain");
		HttpResponse<String> refused = get("/functional");
		assertThat(refused.statusCode()).isEqualTo(429);
		assertThat(refused.headers().allValues("RateLimit-Policy")).containsExactly("\"plain\";q=1;w=60");
		assertThat(ServletRefusalsOutsideHandlersTests.members(refused.body())).containsEntry("limit", "\"plain\"")
			.containsEntry("instance", "\"/functional\"");
	}

	@Test
	void aFailureThatIsNotTheLimitersIsLeftToSpringBoot() throws Exception {
		assertThat(get("/broken").statusCode()).isEqualTo(500);
	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	@Import({ Gate.class, Plain.class, Controller.class })
	static class Application {

		@Bean
		@Order(0)
		WebFilter gateFilter(Gate gate) {
			return (exchange, chain) -> {
				String path = exchange.getRequest().getPath().value();
				if (path.startsWith("/broken")) {
					return Mono.error(new IllegalStateException("not the limiter's"));
				}
				if (!path.startsWith("/gated")) {
					return chain.filter(exchange);
				}
				return gate.pass(exchange.getRequest().getQueryParams().getFirst("user"))
					.then(chain.filter(exchange));
			};
		}

		@Bean
		RouterFunction<ServerResponse> functional(Plain plain) {
			return RouterFunctions.route()
				.GET("/functional", (request) -> ServerResponse.ok().bodyValue(plain.value()))
				.build();
		}

	}

	@Service
	static class Gate {

		@RateLimit(name = "gate", key = "#user", max = "1", window = "1m", algorithm = Algorithm.SLIDING_WINDOW_LOG)
		public Mono<Void> pass(String user) {
			return Mono.empty();
		}

	}

	@Service
	static class Plain {

		@RateLimit(name = "plain", max = "1", window = "1m", algorithm = Algorithm.SLIDING_WINDOW_LOG)
		public String value() {
			return "plain";
		}

	}

	@RestController
	static class Controller {

		@GetMapping("/gated/hello")
		Mono<String> hello() {
			return Mono.just("hello");
		}

	}

}
