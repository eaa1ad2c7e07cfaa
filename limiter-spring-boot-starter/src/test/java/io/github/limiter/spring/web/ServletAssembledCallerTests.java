package io.github.limiter.spring.web;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Import;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

import io.github.limiter.RateLimitExceededException;
import io.github.limiter.spring.annotation.RateLimit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * On Spring MVC, a limited method returning a {@code Mono} is keyed by the request that assembled it, wherever and
 * whenever it is subscribed: on another scheduler, or after the request ended and the container recycled its request
 * object (a call handed off, fire and forget).
 */
@SpringBootTest(classes = ServletAssembledCallerTests.Application.class,
		webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
		properties = { "spring.main.web-application-type=servlet", "limiter.backend=local", "limiter.empty-key=reject" })
class ServletAssembledCallerTests {

	@LocalServerPort
	int port;

	@Autowired
	Controller controller;

	private final HttpClient http = HttpClient.newHttpClient();

	private int get(String path) throws Exception {
		return this.http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + this.port + path)).build(),
				HttpResponse.BodyHandlers.ofString()).statusCode();
	}

	@Test
	void aMonoSubscribedAfterItsRequestEndedIsKeyedByThatRequestsClient() throws Exception {
		assertThat(get("/handoff")).isEqualTo(202);
		assertThat(get("/handoff")).isEqualTo(202);
		long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
		while (this.controller.outcomes.size() < 2 && System.nanoTime() < deadline) {
			Thread.sleep(20);
		}
		// Both keyed by 127.0.0.1: the first admitted, the second over the limit of one; neither a missing key (the
		// request recycled) nor another failure.
		assertThat(this.controller.outcomes).containsExactlyInAnyOrder("done", RateLimitExceededException.class.getSimpleName());
	}

	@Test
	void aMonoSubscribedOnAnotherSchedulerIsKeyedByItsRequestsClient() throws Exception {
		assertThat(get("/elsewhere")).isEqualTo(200);
		assertThat(get("/elsewhere")).isEqualTo(429);
	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	@Import({ Handoffs.class, Controller.class })
	static class Application {

	}

	static class Handoffs {

		@RateLimit(name = "handoff", key = "#ip", max = "1", window = "1h")
		public Mono<String> later() {
			return Mono.just("done");
		}

		@RateLimit(name = "elsewhere", key = "#ip", max = "1", window = "1h")
		public Mono<String> elsewhere() {
			return Mono.just("done");
		}

	}

	@RestController
	static class Controller {

		private final Handoffs handoffs;

		final List<String> outcomes = new CopyOnWriteArrayList<>();

		Controller(Handoffs handoffs) {
			this.handoffs = handoffs;
		}

		@GetMapping("/handoff")
		org.springframework.http.ResponseEntity<String> handoff() {
			this.handoffs.later()
				.delaySubscription(Duration.ofMillis(300))
				.subscribe(this.outcomes::add, failure -> this.outcomes.add(failure.getClass().getSimpleName()));
			return org.springframework.http.ResponseEntity.accepted().body("accepted");
		}

		@GetMapping("/elsewhere")
		Mono<String> elsewhere() {
			return this.handoffs.elsewhere().subscribeOn(Schedulers.boundedElastic());
		}

	}

}
