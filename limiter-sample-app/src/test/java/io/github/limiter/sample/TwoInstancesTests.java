package io.github.limiter.sample;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;

import org.junit.jupiter.api.Test;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Two instances of the sample on one Redis (the first one's embedded server) share every limit.
 */
class TwoInstancesTests {

	private final HttpClient client = HttpClient.newHttpClient();

	private int status(ConfigurableApplicationContext instance, String path) throws Exception {
		int port = ((WebServerApplicationContext) instance).getWebServer().getPort();
		return this.client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path)).build(),
				HttpResponse.BodyHandlers.ofString()).statusCode();
	}

	@Test
	void wrongPasswordsSentAtOnceToBothInstancesMakeThreeTries() throws Exception {
		try (ConfigurableApplicationContext first = new SpringApplicationBuilder(SampleApplication.class)
			.run("--server.port=0")) {
			String redisPort = first.getEnvironment().getProperty("spring.data.redis.port");
			try (ConfigurableApplicationContext second = new SpringApplicationBuilder(SampleApplication.class)
				.run("--server.port=0", "--spring.data.redis.port=" + redisPort)) {
				// 3 failed logins per user per minute: twelve wrong passwords at once, six on each instance.
				java.util.List<java.util.concurrent.CompletableFuture<HttpResponse<String>>> attempts = new java.util.ArrayList<>();
				for (int i = 0; i < 12; i++) {
					ConfigurableApplicationContext instance = (i % 2 == 0) ? first : second;
					int port = ((WebServerApplicationContext) instance).getWebServer().getPort();
					attempts.add(this.client.sendAsync(HttpRequest.newBuilder(
							URI.create("http://127.0.0.1:" + port + "/login?username=eve&password=wrong"))
						.POST(HttpRequest.BodyPublishers.noBody())
						.build(), HttpResponse.BodyHandlers.ofString()));
				}
				java.util.Map<Integer, Integer> statuses = new java.util.TreeMap<>();
				for (java.util.concurrent.CompletableFuture<HttpResponse<String>> attempt : attempts) {
					statuses.merge(attempt.get(30, java.util.concurrent.TimeUnit.SECONDS).statusCode(), 1, Integer::sum);
				}
				assertThat(statuses).as("tried (401) and refused before trying (429)")
					.containsExactly(java.util.Map.entry(401, 3), java.util.Map.entry(429, 9));
			}
		}
	}

	@Test
	void twoInstancesShareOneLimit() throws Exception {
		try (ConfigurableApplicationContext first = new SpringApplicationBuilder(SampleApplication.class)
			.run("--server.port=0")) {
			String redisPort = first.getEnvironment().getProperty("spring.data.redis.port");
			try (ConfigurableApplicationContext second = new SpringApplicationBuilder(SampleApplication.class)
				.run("--server.port=0", "--spring.data.redis.port=" + redisPort)) {
				assertThat(second.getEnvironment().getProperty("spring.data.redis.port")).isEqualTo(redisPort);
				for (int i = 0; i < 3; i++) {
					assertThat(status(first, "/hello")).isEqualTo(200);
				}
				assertThat(status(second, "/hello")).isEqualTo(200);
				assertThat(status(second, "/hello")).isEqualTo(200);
				assertThat(status(second, "/hello")).as("the sixth call of one client, whichever instance").isEqualTo(429);
				assertThat(status(first, "/hello")).isEqualTo(429);
			}
		}
	}

}
