package io.github.limiter.spring.web;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.UUID;

import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Import;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RestController;

import io.github.limiter.RateLimitExceededException;
import io.github.limiter.LimitRequest;
import io.github.limiter.RateLimiter;
import io.github.limiter.algorithm.Algorithm;
import io.github.limiter.backend.redis.RedisScriptBackend;
import io.github.limiter.guard.GuardedBackend;
import io.github.limiter.spring.annotation.RateLimit;
import io.github.limiter.testsupport.TestRedis;
import io.github.limiter.testsupport.WindowBoundaries;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A Spring MVC application on a real Redis: 200s turn into 429s with a problem body and the rate limit header fields,
 * a fallback answers instead, metrics count what happened, and the endpoint shows and resets a key.
 */
@SpringBootTest(classes = WebRedisIntegrationTests.Application.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
		properties = { "management.endpoints.web.exposure.include=health,metrics,prometheus,ratelimiters",
				"management.endpoint.ratelimiters.access=unrestricted", "management.endpoint.health.show-details=always",
				// Spring Boot keeps the reason of a 400 out of its body unless asked (Boot 4 and Boot 3.5).
				"spring.web.error.include-message=always", "server.error.include-message=always",
				// Spring Boot 3 switches metrics export off in tests unless asked.
				"management.prometheus.metrics.export.enabled=true" })
class WebRedisIntegrationTests {

	private static final String PREFIX = TestRedis.uniquePrefix();

	@DynamicPropertySource
	static void redis(DynamicPropertyRegistry registry) {
		registry.add("spring.data.redis.host", () -> "127.0.0.1");
		registry.add("spring.data.redis.port", () -> TestRedis.standalone().port());
		registry.add("limiter.key-prefix", () -> PREFIX);
	}

	@LocalServerPort
	int port;

	@Autowired
	RateLimiter rateLimiter;

	private final HttpClient http = HttpClient.newHttpClient();

	private HttpResponse<String> get(String path) throws Exception {
		return this.http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + this.port + path)).build(),
				HttpResponse.BodyHandlers.ofString());
	}

	private HttpResponse<String> post(String path, String json) throws Exception {
		return this.http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + this.port + path))
			.header("Content-Type", "application/json")
			.POST(HttpRequest.BodyPublishers.ofString(json))
			.build(), HttpResponse.BodyHandlers.ofString());
	}

	private HttpResponse<String> delete(String path) throws Exception {
		return this.http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + this.port + path)).DELETE().build(),
				HttpResponse.BodyHandlers.ofString());
	}

	@Test
	void theEmptyKeyIsResetByAParameter() throws Exception {
		get("/keyless");
		assertThat(get("/keyless").statusCode()).isEqualTo(429);
		HttpResponse<String> reset = delete("/actuator/ratelimiters/keyless?key=");
		assertThat(reset.statusCode()).isEqualTo(200);
		assertThat(reset.body()).contains("\"key\":\"\"").contains("\"available\":1");
		assertThat(get("/keyless").statusCode()).isEqualTo(200);
		assertThat(delete("/actuator/ratelimiters/nowhere?key=").statusCode()).isEqualTo(404);
	}

	@Test
	void aKeyAPathCannotHoldIsReadByAParameter() throws Exception {
		get("/keyless");
		HttpResponse<String> empty = get("/actuator/ratelimiters/keyless?key=");
		assertThat(empty.statusCode()).isEqualTo(200);
		assertThat(empty.body()).contains("\"key\":\"\"").contains("\"available\":0");
		// An IPv6 client's network, as a limit keyed by #ip stores it.
		HttpResponse<String> network = get("/actuator/ratelimiters/keyless?key=2001%3Adb8%3A1%3A2%3A%3A%2F64");
		assertThat(network.statusCode()).isEqualTo(200);
		assertThat(network.body()).contains("\"key\":\"2001:db8:1:2::/64\"").contains("\"available\":1");
		assertThat(get("/actuator/ratelimiters/nowhere?key=a%2Fb").statusCode()).isEqualTo(404);
		assertThat(get("/actuator/ratelimiters/keyless").body()).contains("\"name\":\"keyless\"");
	}

	@Test
	void theRedisBackendIsUsed() {
		assertThat(this.rateLimiter.backend()).isInstanceOf(GuardedBackend.class);
		assertThat(((GuardedBackend) this.rateLimiter.backend()).delegate()).isInstanceOf(RedisScriptBackend.class);
	}

	@Test
	void twoHundredsTurnIntoATooManyRequestsProblem() throws Exception {
		String user = "u-" + UUID.randomUUID();
		HttpResponse<String> first = get("/orders/" + user);
		assertThat(first.statusCode()).isEqualTo(200);
		assertThat(first.headers().firstValue("RateLimit-Policy")).hasValue("\"orders\";q=2;w=60");
		assertThat(first.headers().firstValue("RateLimit")).hasValue("\"orders\";r=1;t=60");
		assertThat(get("/orders/" + user).statusCode()).isEqualTo(200);

		HttpResponse<String> limited = get("/orders/" + user);
		assertThat(limited.statusCode()).isEqualTo(429);
		assertThat(limited.headers().firstValue("Content-Type")).hasValue("application/problem+json");
		long retryAfter = Long.parseLong(limited.headers().firstValue("Retry-After").orElseThrow());
		assertThat(retryAfter).isBetween(1L, 60L);
		assertThat(limited.headers().firstValue("RateLimit")).hasValueSatisfying(value -> assertThat(value)
			.startsWith("\"orders\";r=0;t="));
		assertThat(limited.body()).contains("\"status\":429")
			.contains("\"title\":\"Too Many Requests\"")
			.contains("\"limit\":\"orders\"")
			.contains("\"retryAfterSeconds\":" + retryAfter);

		assertThat(get("/orders/other-" + user).statusCode()).as("another user has their own limit").isEqualTo(200);
	}

	@Test
	void theClientIpComesFromTheRequest() throws Exception {
		// All calls come from 127.0.0.1; a forged X-Forwarded-For from an untrusted header is not read by the limiter.
		int ok = 0;
		for (int i = 0; i < 4; i++) {
			HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + this.port + "/by-ip"))
				.header("X-Forwarded-For", "203.0.113." + i)
				.build();
			if (this.http.send(request, HttpResponse.BodyHandlers.ofString()).statusCode() == 200) {
				ok++;
			}
		}
		assertThat(ok).isEqualTo(3);
	}

	@Test
	void aFallbackGivesAFriendlyAnswer() throws Exception {
		String sku = "sku-" + UUID.randomUUID();
		assertThat(get("/seckill/" + sku).body()).isEqualTo("bought " + sku);
		HttpResponse<String> degraded = get("/seckill/" + sku);
		assertThat(degraded.statusCode()).isEqualTo(200);
		assertThat(degraded.body()).isEqualTo("busy, try again later");
		assertThat(degraded.headers().firstValue("RateLimit")).hasValue("\"seckill\";r=0;t=60");
	}

	@Test
	void metricsCountAllowedAndBlockedDecisions() throws Exception {
		// The fixed window (its metric tag is the point) of an hour is aligned to the epoch: an hour boundary between the
		// five calls would start a fresh count.
		WindowBoundaries.awayFromTheEndOfTheWindow(Duration.ofHours(1), Duration.ofSeconds(30));
		for (int i = 0; i < 5; i++) {
			get("/metered");
		}
		String allowed = get("/actuator/metrics/limiter.decisions?tag=limit:metered&tag=outcome:allowed").body();
		String blocked = get("/actuator/metrics/limiter.decisions?tag=limit:metered&tag=outcome:blocked").body();
		assertThat(allowed).contains("\"value\":3.0");
		assertThat(blocked).contains("\"value\":2.0");
		assertThat(get("/actuator/metrics/limiter.decisions").body()).contains("\"backend\"").contains("\"redis\"");
		assertThat(get("/actuator/metrics/limiter.decision.duration").statusCode()).isEqualTo(200);
		assertThat(get("/actuator/prometheus").body())
			.contains("limiter_decisions_total{algorithm=\"fixed-window\",backend=\"redis\",limit=\"metered\",operation=\"acquire\",outcome=\"blocked\"} 2.0");
	}

	@Test
	void theEndpointListsLimitsShowsAndResetsAKey() throws Exception {
		String user = "e-" + UUID.randomUUID();
		get("/orders/" + user);
		String all = get("/actuator/ratelimiters").body();
		assertThat(all).contains("\"backend\":\"redis\"")
			.contains("\"name\":\"orders\"")
			.contains("\"algorithm\":\"SLIDING_WINDOW_LOG\"")
			.contains("\"keyExpression\":\"#user\"")
			.contains("Controller.orders")
			.as("where each setting comes from")
			.contains("\"max\":\"attribute 'max'\"");
		String state = get("/actuator/ratelimiters/orders/" + user).body();
		assertThat(state).contains("\"available\":1").contains("\"capacity\":2");
		get("/orders/" + user);
		assertThat(get("/actuator/ratelimiters/orders/" + user).body()).contains("\"available\":0");
		assertThat(delete("/actuator/ratelimiters/orders/" + user).statusCode()).isEqualTo(204);
		assertThat(get("/actuator/ratelimiters/orders/" + user).body()).contains("\"available\":2")
			.as("a full key has nothing to refill")
			.contains("\"resetAfterMillis\":0");
		assertThat(get("/actuator/ratelimiters/nope").statusCode()).isEqualTo(404);
		assertThat(get("/actuator/ratelimiters/nope/" + user).statusCode()).isEqualTo(404);
		assertThat(delete("/actuator/ratelimiters/nope/" + user).statusCode()).as("a misspelt limit resets nothing")
			.isEqualTo(404);
		assertThat(post("/actuator/ratelimiters/nope", "{\"max\": \"3\"}").statusCode()).as("nor is it retuned")
			.isEqualTo(404);
		assertThat(delete("/actuator/ratelimiters/nope").statusCode()).isEqualTo(404);
		String tooLong = "k".repeat(LimitRequest.MAX_KEY_LENGTH + 1);
		HttpResponse<String> refused = get("/actuator/ratelimiters/orders/" + tooLong);
		assertThat(refused.statusCode()).as("a key the limiter refuses is the request's fault").isEqualTo(400);
		assertThat(refused.body()).contains("above the maximum of " + LimitRequest.MAX_KEY_LENGTH);
		assertThat(delete("/actuator/ratelimiters/orders/" + tooLong).statusCode()).isEqualTo(400);
	}

	@Test
	void theEndpointOverridesALimitsNumbersAtRuntimeAndRemovesTheOverride() throws Exception {
		String user = "t-" + UUID.randomUUID();
		assertThat(get("/tuned/" + user).statusCode()).isEqualTo(200);
		HttpResponse<String> tuned = post("/actuator/ratelimiters/tuned", "{\"max\": \"3\", \"cost\": \"1\"}");
		assertThat(tuned.statusCode()).isEqualTo(200);
		assertThat(tuned.body()).contains("\"capacity\":3")
			.contains("\"max\":\"runtime override 'max'\"")
			.contains("\"cost\":\"runtime override 'cost'\"")
			.contains("\"window\":\"attribute 'window'\"");
		// One of the 3 was taken before the change: the state is kept.
		assertThat(get("/tuned/" + user).statusCode()).isEqualTo(200);
		assertThat(get("/tuned/" + user).statusCode()).isEqualTo(200);
		assertThat(get("/tuned/" + user).statusCode()).isEqualTo(429);

		HttpResponse<String> invalid = post("/actuator/ratelimiters/tuned", "{\"max\": \"-1\"}");
		assertThat(invalid.statusCode()).isEqualTo(400);
		assertThat(invalid.body()).contains("runtime override 'max' = '-1' must be positive");
		HttpResponse<String> nothing = post("/actuator/ratelimiters/tuned", "{\"on-failure\": \"closed\"}");
		assertThat(nothing.statusCode()).isEqualTo(400);
		assertThat(nothing.body()).as("the fields it reads").contains("Give at least one of [max, window");
		HttpResponse<String> empty = post("/actuator/ratelimiters/tuned", "{\"max\": \"\"}");
		assertThat(empty.statusCode()).isEqualTo(400);
		assertThat(empty.body()).contains("Runtime override 'max' of limit 'tuned' is empty");
		// Beyond what a wait can count in nanoseconds, every call would fail: refused before it is stored.
		HttpResponse<String> endless = post("/actuator/ratelimiters/tuned", "{\"maxWait\": \"200000d\"}");
		assertThat(endless.statusCode()).isEqualTo(400);
		assertThat(endless.body()).contains("'maxWait' = '200000d' must be at most 3660 days");
		assertThat(post("/actuator/ratelimiters/nope", "{\"max\": \"1\"}").statusCode()).as("no such limit")
			.isEqualTo(404);
		// Overrides left in Redis by a limit renamed since: no instance applies them, and DELETE removes them.
		io.github.limiter.spi.OverrideStore store = (io.github.limiter.spi.OverrideStore) ((io.github.limiter.guard.GuardedBackend) this.rateLimiter
			.backend()).delegate();
		store.override("renamed-long-ago", java.util.Map.of("max", "5")).toCompletableFuture().join();
		HttpResponse<String> orphan = delete("/actuator/ratelimiters/renamed-long-ago");
		assertThat(orphan.statusCode()).isEqualTo(200);
		assertThat(orphan.body()).contains("the stored overrides of a limit this application does not declare");
		assertThat(store.overrides().toCompletableFuture().join()).doesNotContainKey("renamed-long-ago");
		assertThat(delete("/actuator/ratelimiters/renamed-long-ago").statusCode()).as("nothing left to remove")
			.isEqualTo(404);
		assertThat(get("/actuator/ratelimiters/tuned").body()).as("an invalid override changes nothing")
			.contains("\"capacity\":3");

		HttpResponse<String> removed = delete("/actuator/ratelimiters/tuned");
		assertThat(removed.statusCode()).isEqualTo(200);
		assertThat(removed.body()).contains("\"capacity\":1").contains("\"max\":\"attribute 'max'\"");
	}

	@Test
	void healthShowsTheBackendAnswering() throws Exception {
		HttpResponse<String> health = get("/actuator/health/rateLimiter");
		assertThat(health.statusCode()).isEqualTo(200);
		assertThat(health.body()).contains("\"status\":\"UP\"").contains("\"backend\":\"redis\"")
			.contains("\"circuit\":\"CLOSED\"").contains("lastProbeMillis").contains("\"instancesCounted\":true");
	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	@Import(Controller.class)
	static class Application {

	}

	@RestController
	static class Controller {

		@GetMapping("/orders/{user}")
		@RateLimit(name = "orders", key = "#user", max = "2", window = "1m", algorithm = Algorithm.SLIDING_WINDOW_LOG)
		public String orders(@PathVariable String user) {
			return "ok";
		}

		@GetMapping("/tuned/{user}")
		// Exact and without boundaries: a fixed window aligned to the epoch would start a fresh count at a minute boundary
		// between the test's calls.
		@RateLimit(name = "tuned", key = "#user", max = "1", window = "1m", algorithm = Algorithm.SLIDING_WINDOW_LOG)
		String tuned(@PathVariable String user) {
			return "ok";
		}

		@GetMapping("/by-ip")
		@RateLimit(name = "by-ip", key = "#ip", max = "3", window = "1m")
		public String byIp() {
			return "ok";
		}

		@GetMapping("/seckill/{sku}")
		@RateLimit(name = "seckill", key = "#sku", max = "1", window = "1m", fallback = "busy")
		public String seckill(@PathVariable String sku) {
			return "bought " + sku;
		}

		public String busy(String sku, RateLimitExceededException rejection) {
			return "busy, try again later";
		}

		@GetMapping("/keyless")
		@RateLimit(name = "keyless", max = "1", window = "1h", algorithm = Algorithm.SLIDING_WINDOW_LOG)
		public String keyless() {
			return "ok";
		}

		@GetMapping("/metered")
		@RateLimit(name = "metered", max = "3", window = "1h", algorithm = Algorithm.FIXED_WINDOW)
		public String metered() {
			return "ok";
		}

	}

}
