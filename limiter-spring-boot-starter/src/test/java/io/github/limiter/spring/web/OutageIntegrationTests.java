package io.github.limiter.spring.web;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Import;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

import io.github.limiter.algorithm.Algorithm;
import io.github.limiter.spring.annotation.RateLimit;
import io.github.limiter.testsupport.RedisProcess;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Redis frozen with {@code kill -STOP} under a running web application: every request is answered within the
 * deadline plus a margin, as each limit's failure policy says; the heartbeat's probe opens the circuit without any
 * traffic; the decisions made without Redis are counted and visible in the endpoint and health, which reports
 * {@code DEGRADED} at once while the application stays {@code UP}; once Redis answers again, so does the limiter.
 */
@SpringBootTest(classes = OutageIntegrationTests.Application.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
		properties = { "management.endpoints.web.exposure.include=health,metrics,ratelimiters",
				"management.endpoint.ratelimiters.access=unrestricted", "management.endpoint.health.show-details=always",
				"limiter.failure.deadline=50ms",
				"limiter.failure.max-deadline=300ms", "limiter.failure.open-duration=500ms",
				"limiter.failure.heartbeat=200ms", "limiter.failure.expected-instances=2",
				// Spring Boot's own Redis indicator would wait for Lettuce's one-minute timeout and answer DOWN: it is not
				// the limiter's, and this test looks at how the limiter's own status aggregates.
				"management.health.redis.enabled=false" })
class OutageIntegrationTests {

	/** Generous for a shared two-core machine; Lettuce's own command timeout is a minute. */
	private static final long MARGIN_MILLIS = 450;

	private static final String NOT_CLOSED = "\"circuit\":\"(OPEN|HALF_OPEN)\"";

	private static final RedisProcess redis = RedisProcess.start();

	@DynamicPropertySource
	static void redis(DynamicPropertyRegistry registry) {
		registry.add("spring.data.redis.host", () -> "127.0.0.1");
		registry.add("spring.data.redis.port", redis::port);
	}

	@AfterAll
	static void stopRedis() {
		redis.close();
	}

	@LocalServerPort
	int port;

	private final HttpClient http = HttpClient.newHttpClient();

	private Timed get(String path) throws Exception {
		long start = System.nanoTime();
		HttpResponse<String> response = this.http.send(
				HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + this.port + path)).build(),
				HttpResponse.BodyHandlers.ofString());
		return new Timed(response, (System.nanoTime() - start) / 1_000_000);
	}

	private double count(String outcome) throws Exception {
		HttpResponse<String> response = get("/actuator/metrics/limiter.decisions?tag=outcome:" + outcome).response();
		if (response.statusCode() == 404) {
			return 0;
		}
		java.util.regex.Matcher value = java.util.regex.Pattern.compile("\"value\":([0-9.]+)").matcher(response.body());
		return value.find() ? Double.parseDouble(value.group(1)) : 0;
	}

	record Timed(HttpResponse<String> response, long millis) {

		int status() {
			return this.response.statusCode();
		}

	}

	@Test
	void aFrozenRedisCostsEachRequestNoMoreThanTheDeadlineAndThePoliciesDecide() throws Exception {
		// Warm up (connection, script load), so that the calls below find Redis answering fast, even on a loaded machine.
		for (int i = 0; i < 10; i++) {
			get("/open");
		}
		double allowedBefore = count("fallback-allowed");
		double blockedBefore = count("fallback-blocked");
		assertThat(get("/open").status()).isEqualTo(200);
		assertThat(get("/closed").status()).isEqualTo(200);
		assertThat(get("/local").status()).isEqualTo(200);
		redis.freeze();
		try {
			Timed open = get("/open");
			assertThat(open.status()).isEqualTo(200);
			assertThat(open.millis()).isLessThan(50 + MARGIN_MILLIS);
			Timed closed = get("/closed");
			assertThat(closed.status()).isEqualTo(429);
			assertThat(closed.response().body()).contains("could not be checked in time; retry in");
			assertThat(closed.millis()).isLessThan(50 + MARGIN_MILLIS);
			long giveUp = System.nanoTime() + 10_000_000_000L;
			while (!get("/actuator/ratelimiters").response().body().contains("\"circuit\":\"OPEN\"")
					&& System.nanoTime() < giveUp) {
				Thread.sleep(50);
			}
			// Confirmed by the heartbeat's probe: the local share of 4 per hour for 2 instances is 2, counted afresh.
			assertThat(get("/local").status()).isEqualTo(200);
			assertThat(get("/local").status()).isEqualTo(200);
			Timed local = get("/local");
			assertThat(local.status()).isEqualTo(429);
			assertThat(local.response().body())
				.contains("exceeded for this instance's share while the limit's store is down; retry in");
			// The fields describe the quota that decided, the share: q and r of one quota.
			assertThat(local.response().headers().firstValue("RateLimit-Policy")).hasValue("\"local\";q=2;w=3600");
			assertThat(local.response().headers().firstValue("RateLimit").orElseThrow()).startsWith("\"local\";r=0;");
			assertThat(local.millis()).isLessThan(50 + MARGIN_MILLIS);

			String limits = get("/actuator/ratelimiters").response().body();
			// Open, or half open while a probe waits on the frozen Redis: the circuit opens for 500 ms at a time.
			assertThat(limits).containsPattern(NOT_CLOSED).contains("no answer within 300 ms\"")
				.contains("\"instances\":2");
			// A key's state is the store's, not the failure policy's: unreadable now, and said so.
			HttpResponse<String> state = get("/actuator/ratelimiters/local/somebody").response();
			assertThat(state.statusCode()).isEqualTo(503);
			assertThat(state.body()).contains("could not read local for 'somebody'").contains("no answer within 2000 ms");
			HttpResponse<String> reset = this.http.send(HttpRequest
				.newBuilder(URI.create("http://127.0.0.1:" + this.port + "/actuator/ratelimiters/local/somebody"))
				.DELETE()
				.build(), HttpResponse.BodyHandlers.ofString());
			assertThat(reset.statusCode()).isEqualTo(503);
			assertThat(reset.body()).contains("could not reset local for 'somebody': no answer within 2000 ms")
				.contains("the reset may still land once the store answers");
			Timed health = get("/actuator/health/rateLimiter");
			assertThat(health.response().body()).contains("\"status\":\"DEGRADED\"").containsPattern(NOT_CLOSED);
			assertThat(health.millis()).as("health reads the guard's state, it does not wait for Redis")
				.isLessThan(MARGIN_MILLIS);
			Timed application = get("/actuator/health");
			String body = application.response().body();
			assertThat(application.status()).isEqualTo(200);
			// Boot 3.5 writes the status before the components, Boot 4 after them.
			assertThat(body.startsWith("{\"status\":\"UP\"") || body.endsWith("\"status\":\"UP\"}")).as(body).isTrue();
			assertThat(body).containsPattern(
					"\"rateLimiter\":\\{(\"status\":\"DEGRADED\"|\"details\":\\{[^}]*\\},\"status\":\"DEGRADED\")");
			assertThat(count("fallback-allowed") - allowedBefore).isEqualTo(3.0);
			assertThat(count("fallback-blocked") - blockedBefore).isEqualTo(2.0);
			long slowest = 0;
			for (int i = 0; i < 20; i++) {
				long millis = get("/open").millis();
				assertThat(millis).as("an open circuit stops paying the deadline").isLessThan(50 + MARGIN_MILLIS);
				slowest = Math.max(slowest, millis);
			}
			System.out.println("Frozen Redis, deadline 50 ms: open " + open.millis() + " ms, closed " + closed.millis()
					+ " ms, local " + local.millis() + " ms; slowest of 20 calls with the circuit open: " + slowest + " ms");
		}
		finally {
			redis.resume();
		}
		long giveUp = System.nanoTime() + 10_000_000_000L;
		do {
			Thread.sleep(600);
			get("/open");
		}
		while (!get("/actuator/ratelimiters").response().body().contains("\"circuit\":\"CLOSED\"") && System.nanoTime() < giveUp);
		assertThat(get("/actuator/ratelimiters").response().body()).contains("\"circuit\":\"CLOSED\"");
		assertThat(get("/actuator/health/rateLimiter").response().body()).contains("\"status\":\"UP\"");
	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	@Import(Controller.class)
	static class Application {

	}

	@RestController
	static class Controller {

		@GetMapping("/open")
		@RateLimit(name = "open", max = "1000", window = "1h", onFailure = "open")
		public String open() {
			return "ok";
		}

		@GetMapping("/closed")
		@RateLimit(name = "closed", max = "1000", window = "1h", onFailure = "closed")
		public String closed() {
			return "ok";
		}

		@GetMapping("/local")
		// Without boundaries: the local share decides on the real clock, where an epoch-aligned fixed window would start
		// afresh at an hour boundary between the calls.
		@RateLimit(name = "local", max = "4", window = "1h", algorithm = Algorithm.SLIDING_WINDOW_LOG, onFailure = "local")
		public String local() {
			return "ok";
		}

	}

}
