package io.github.limiter.sample;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;

import io.github.limiter.testsupport.WindowBoundaries;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The sample application on its embedded Redis, driven over HTTP: every scenario of the source documents admits and
 * rejects what it should.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class SampleApplicationTests {

	@LocalServerPort
	int port;

	@Value("${sample.zone}")
	String zone;

	private final HttpClient client = HttpClient.newHttpClient();

	private HttpResponse<String> get(String path) throws Exception {
		return this.client.send(request(path).build(), HttpResponse.BodyHandlers.ofString());
	}

	private HttpResponse<String> post(String path) throws Exception {
		return this.client.send(request(path).POST(HttpRequest.BodyPublishers.noBody()).build(),
				HttpResponse.BodyHandlers.ofString());
	}

	private HttpRequest.Builder request(String path) {
		return HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + this.port + path));
	}

	@Test
	void runsOnTheEmbeddedRedis() throws Exception {
		assertThat(get("/actuator/health/rateLimiter").body()).contains("\"backend\":\"redis\"").contains("\"UP\"");
	}

	@Test
	void greetingTurnsInto429AfterTheBurst() throws Exception {
		for (int i = 4; i >= 0; i--) {
			HttpResponse<String> response = get("/hello");
			assertThat(response.statusCode()).isEqualTo(200);
			String remaining = "\"greeting\";r=" + i + ";";
			assertThat(response.headers().firstValue("RateLimit")).hasValueSatisfying(
					value -> assertThat(value).startsWith(remaining));
		}
		HttpResponse<String> limited = get("/hello");
		assertThat(limited.statusCode()).isEqualTo(429);
		assertThat(limited.headers().firstValue("Retry-After")).hasValue("1");
		assertThat(limited.headers().firstValue("RateLimit-Policy")).hasValue("\"greeting\";q=5;w=5");
		assertThat(limited.body()).contains("\"title\":\"Too Many Requests\"").contains("\"limit\":\"greeting\"");

		assertThat(get("/actuator/ratelimiters").body()).contains("\"name\":\"greeting\"").contains("\"backend\":\"redis\"")
			.contains("\"capacity\":\"limiter.policies.greeting.capacity\"");
		assertThat(get("/actuator/metrics/limiter.decisions?tag=limit:greeting&tag=outcome:blocked").body())
			.contains("\"value\":1.0");
		assertThat(get("/actuator/prometheus").body()).contains("limiter_decisions_total{algorithm=\"token-bucket\",backend=\"redis\",limit=\"greeting\"");
	}

	@Test
	void aColdSearchTakesAThirdOfTheBurst() throws Exception {
		HttpResponse<String> first = get("/search?q=redis");
		assertThat(first.statusCode()).isEqualTo(200);
		// Cold, a permit costs about three intervals: 6 more pass now where a warm bucket of 20 would say 19.
		assertThat(first.headers().firstValue("RateLimit")).hasValueSatisfying(
				value -> assertThat(value).startsWith("\"search\";r=6;"));
		assertThat(get("/actuator/ratelimiters").body()).contains("\"warmup\":\"PT10S\"")
			.contains("\"warmup\":\"limiter.policies.search.warmup\"");
	}

	@Test
	void anOperatorWidensTheFlashSaleBurstAtRuntimeAndPutsItBack() throws Exception {
		HttpResponse<String> tuned = this.client.send(request("/actuator/ratelimiters/seckill-sku")
			.header("Content-Type", "application/json")
			.POST(HttpRequest.BodyPublishers.ofString("{\"capacity\": \"20\"}"))
			.build(), HttpResponse.BodyHandlers.ofString());
		assertThat(tuned.statusCode()).as(tuned.body()).isEqualTo(200);
		assertThat(tuned.body()).contains("\"capacity\":20").contains("\"capacity\":\"runtime override 'capacity'\"");
		try {
			// Configured, a SKU's burst is 10; overridden, 20 orders go through at once.
			String sku = "tuned-" + UUID.randomUUID();
			int ordered = 0;
			for (int i = 0; i < 20; i++) {
				ordered += post("/seckill/" + sku).body().contains("\"ordered\"") ? 1 : 0;
			}
			assertThat(ordered).isGreaterThanOrEqualTo(20);
		}
		finally {
			HttpResponse<String> back = this.client.send(request("/actuator/ratelimiters/seckill-sku").DELETE().build(),
					HttpResponse.BodyHandlers.ofString());
			assertThat(back.body()).contains("\"capacity\":10")
				.contains("\"capacity\":\"limiter.policies.flash-sale.capacity\"");
		}
	}

	@Test
	void onlyFailedLoginsCountAndTheFourthAsksForACaptcha() throws Exception {
		assertThat(post("/login?username=bob&password=hunter2").statusCode()).isEqualTo(200);
		assertThat(post("/login?username=bob&password=hunter2").statusCode()).as("successes do not count").isEqualTo(200);
		for (int i = 0; i < 3; i++) {
			assertThat(post("/login?username=bob&password=nope").statusCode()).isEqualTo(401);
		}
		HttpResponse<String> captcha = post("/login?username=bob&password=hunter2");
		assertThat(captcha.statusCode()).isEqualTo(429);
		assertThat(captcha.body()).contains("\"captchaRequired\":true");
		assertThat(post("/login?username=alice&password=secret").statusCode()).as("another user").isEqualTo(200);
		assertThat(get("/actuator/ratelimiters/login-failures/bob").body()).contains("\"available\":0");
	}

	@Test
	void aFlashSaleAnswersBusyInsteadOfAnErrorOnceTheSkuBucketIsEmpty() throws Exception {
		String sku = "sku-" + UUID.randomUUID();
		int ordered = 0;
		int busy = 0;
		long start = System.nanoTime();
		for (int i = 0; i < 12; i++) {
			HttpResponse<String> response = post("/seckill/" + sku);
			assertThat(response.statusCode()).isEqualTo(200);
			if (response.body().contains("\"ordered\"")) {
				ordered++;
			}
			else if (response.body().contains("\"busy\"")) {
				busy++;
			}
		}
		// A burst of 10, refilled at 5 per second while the calls run (longer on a loaded machine).
		long refilled = (long) Math.ceil((System.nanoTime() - start) / 1e9 * 5);
		assertThat(ordered).isBetween(10, (int) Math.min(12, 10 + refilled));
		assertThat(busy).isEqualTo(12 - ordered);
	}

	@Test
	void aMessageOncePerCalendarDayAndThreeTimesPerWeekAsOneDecision() throws Exception {
		// A midnight in the sample's zone between the two messages would start a new calendar day.
		WindowBoundaries.awayFromMidnight(ZoneId.of(this.zone), Duration.ofSeconds(10));
		String user = "u-" + UUID.randomUUID();
		assertThat(post("/messages/" + user).statusCode()).isEqualTo(200);
		HttpResponse<String> again = post("/messages/" + user);
		assertThat(again.statusCode()).isEqualTo(429);
		assertThat(again.body()).contains("\"limit\":\"message-daily\"");
		assertThat(again.headers().firstValue("RateLimit-Policy")).hasValueSatisfying(
				value -> assertThat(value).contains("\"message-daily\";q=1;w=86400").contains("\"message-weekly\";q=3;w=604800"));
		assertThat(get("/actuator/ratelimiters/message-weekly/" + user).body())
			.as("the weekly limit consumed only the message that was sent").contains("\"available\":2");
	}

	@Test
	void thePublicApiIsLimitedPerClientIpInFixedWindows() throws Exception {
		HttpResponse<String> first = get("/api/quote");
		Matcher reset = Pattern.compile("t=(\\d+)").matcher(first.headers().firstValue("RateLimit").orElseThrow());
		assertThat(reset.find()).isTrue();
		if (Integer.parseInt(reset.group(1)) < 5) {
			// Too close to the window's end to count on it: start again in the next window.
			Thread.sleep(Integer.parseInt(reset.group(1)) * 1000L + 200);
			first = get("/api/quote");
		}
		assertThat(first.statusCode()).isEqualTo(200);
		for (int i = 0; i < 9; i++) {
			assertThat(get("/api/quote").statusCode()).isEqualTo(200);
		}
		HttpRequest forged = request("/api/quote").header("X-Forwarded-For", "198.51.100.7").build();
		assertThat(this.client.send(forged, HttpResponse.BodyHandlers.ofString()).statusCode())
			.as("a forged X-Forwarded-For does not make a new client").isEqualTo(429);
		for (int i = 0; i < 5; i++) {
			HttpRequest partner = request("/api/quote").header("X-Api-Key", "partner-demo-key").build();
			assertThat(this.client.send(partner, HttpResponse.BodyHandlers.ofString()).statusCode())
				.as("a partner's calls are skipped by the limit's condition").isEqualTo(200);
		}
		HttpRequest unknownKey = request("/api/quote").header("X-Api-Key", "guess").build();
		assertThat(this.client.send(unknownKey, HttpResponse.BodyHandlers.ofString()).statusCode()).isEqualTo(429);
		assertThat(get("/actuator/metrics/limiter.decisions?tag=limit:public-api&tag=outcome:skipped").body())
			.contains("\"value\":5.0");
	}

	@Test
	void aLeakyBucketQueuesItsBurstOrServesItAtOnce() throws Exception {
		List<CompletableFuture<HttpResponse<String>>> queued = new ArrayList<>();
		long start = System.nanoTime();
		for (int i = 0; i < 7; i++) {
			queued.add(this.client.sendAsync(request("/leaky/queue").build(), HttpResponse.BodyHandlers.ofString()));
		}
		long served = queued.stream().map(CompletableFuture::join).filter(r -> r.statusCode() == 200).count();
		long millis = (System.nanoTime() - start) / 1_000_000;
		assertThat(served).as("rate 2/s with a burst of 5 admits 6 at once").isEqualTo(6);
		assertThat(millis).as("the sixth waited its turn, 2.5 s after the first").isGreaterThanOrEqualTo(2000);

		int immediate = 0;
		long nodelayStart = System.nanoTime();
		for (int i = 0; i < 7; i++) {
			if (get("/leaky/nodelay").statusCode() == 200) {
				immediate++;
			}
		}
		assertThat(immediate).isEqualTo(6);
		assertThat((System.nanoTime() - nodelayStart) / 1_000_000).as("nodelay serves the burst at once").isLessThan(1500);

		List<CompletableFuture<HttpResponse<String>>> twoStage = new ArrayList<>();
		for (int i = 0; i < 7; i++) {
			twoStage.add(this.client.sendAsync(request("/leaky/two-stage").build(), HttpResponse.BodyHandlers.ofString()));
		}
		assertThat(twoStage.stream().map(CompletableFuture::join).filter(r -> r.statusCode() == 200).count())
			.as("two-stage admits the same six, three at once and three in turn").isEqualTo(6);
	}

	@Test
	void theSortedSetWindowHandsOutUniqueTokensOnlyWhileItHasRoom() throws Exception {
		String client = "c-" + UUID.randomUUID();
		Set<String> tokens = new HashSet<>();
		for (int i = 0; i < 5; i++) {
			HttpResponse<String> response = get("/tokens?client=" + client);
			assertThat(response.statusCode()).isEqualTo(200);
			Matcher token = Pattern.compile("\"token\":\"([^\"]+)\"").matcher(response.body());
			assertThat(token.find()).isTrue();
			tokens.add(token.group(1));
		}
		assertThat(tokens).hasSize(5);
		HttpResponse<String> full = get("/tokens?client=" + client);
		assertThat(full.statusCode()).isEqualTo(429);
		assertThat(full.body()).contains("\"token\":\"\"");
	}

}
