package io.github.limiter.sample;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;

import io.github.limiter.testsupport.RedisProcess;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Seed 004 with the {@code redisson} profile: {@code OVERALL} is shared by the instances, {@code PER_CLIENT} is not,
 * and a rate changed in configuration takes effect after a restart without wiping what was already taken.
 */
class RedissonProfileTests {

	private static final RedisProcess redis = RedisProcess.start();

	private final HttpClient client = HttpClient.newHttpClient();

	@AfterAll
	static void stop() {
		redis.close();
	}

	private ConfigurableApplicationContext start(String... properties) {
		String[] args = new String[properties.length + 3];
		args[0] = "--server.port=0";
		args[1] = "--spring.data.redis.port=" + redis.port();
		args[2] = "--spring.profiles.active=redisson";
		System.arraycopy(properties, 0, args, 3, properties.length);
		return new SpringApplicationBuilder(SampleApplication.class).run(args);
	}

	private int status(ConfigurableApplicationContext instance, String path) throws Exception {
		int port = ((WebServerApplicationContext) instance).getWebServer().getPort();
		return this.client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path)).build(),
				HttpResponse.BodyHandlers.ofString()).statusCode();
	}

	@Test
	void theProfileConnectsWhereSpringDataRedisIsToldTo() throws Exception {
		redis.command("FLUSHALL");
		try (ConfigurableApplicationContext instance = new SpringApplicationBuilder(SampleApplication.class).run(
				"--server.port=0", "--spring.data.redis.url=redis://127.0.0.1:" + redis.port() + "/0",
				"--spring.profiles.active=redisson")) {
			assertThat(status(instance, "/redisson/per-client")).isEqualTo(200);
			assertThat(redis.command("DBSIZE")).as("decided on the Redis of the URL").isNotEqualTo("0");
		}
	}

	@Test
	void overallIsSharedPerClientIsNotAndAChangedRateTakesEffect() throws Exception {
		try (ConfigurableApplicationContext first = start(); ConfigurableApplicationContext second = start()) {
			assertThat(first.getBean(org.redisson.api.RedissonClient.class)).isNotNull();
			for (int i = 0; i < 3; i++) {
				assertThat(status(i % 2 == 0 ? first : second, "/redisson/overall")).isEqualTo(200);
			}
			assertThat(status(first, "/redisson/overall")).isEqualTo(429);
			assertThat(status(second, "/redisson/overall")).isEqualTo(429);

			for (int i = 0; i < 3; i++) {
				assertThat(status(first, "/redisson/per-client")).isEqualTo(200);
			}
			assertThat(status(first, "/redisson/per-client")).isEqualTo(429);
			assertThat(status(second, "/redisson/per-client")).as("each instance has its own").isEqualTo(200);
		}
		try (ConfigurableApplicationContext retuned = start("--limiter.policies.redisson-overall.max=5")) {
			assertThat(status(retuned, "/redisson/overall")).as("5 per interval now, 3 already taken").isEqualTo(200);
			assertThat(status(retuned, "/redisson/overall")).isEqualTo(200);
			assertThat(status(retuned, "/redisson/overall")).isEqualTo(429);
		}
	}

}
