package io.github.limiter.spring.interceptor;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.scheduling.annotation.Async;
import org.springframework.scheduling.annotation.EnableAsync;

import io.github.limiter.RateLimitExceededException;
import io.github.limiter.spring.annotation.RateLimit;
import io.github.limiter.testsupport.TestRedis;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * An {@code @Async} limited method that returns a {@code CompletableFuture} runs on the executor's thread, where
 * Spring's async interceptor waits for the future the rest of the call returns. Its decision is awaited there and
 * the method runs there: handed to the same executor instead, the method would wait behind the very thread that waits
 * for it, and a full pool would never run it again.
 */
class AsyncStageTests {

	@ParameterizedTest
	@ValueSource(strings = { "local", "redis" })
	void aPoolOfOneThreadDecidesAndRunsEveryCall(String backend) throws Exception {
		try (ConfigurableApplicationContext context = new SpringApplicationBuilder(Application.class)
			.web(WebApplicationType.NONE)
			.properties("limiter.backend=" + backend, "spring.data.redis.host=127.0.0.1",
					"spring.data.redis.port=" + (backend.equals("redis") ? TestRedis.standalone().port() : 1),
					"limiter.key-prefix=" + TestRedis.uniquePrefix(), "spring.main.banner-mode=off",
					"spring.task.execution.pool.core-size=1", "spring.task.execution.pool.max-size=1",
					"spring.task.execution.thread-name-prefix=mail-",
					// The first call also connects: give it time, so that it is decided by Redis, not the guard.
					"limiter.failure.deadline=5s", "limiter.failure.max-deadline=5s")
			.run()) {
			Mail mail = context.getBean(Mail.class);
			List<CompletableFuture<String>> sent = new ArrayList<>();
			for (int i = 0; i < 5; i++) {
				sent.add(mail.send("alice"));
			}
			List<String> answers = new ArrayList<>();
			for (CompletableFuture<String> one : sent) {
				try {
					answers.add(one.get(60, TimeUnit.SECONDS));
				}
				catch (ExecutionException ex) {
					assertThat(ex.getCause()).isInstanceOf(RateLimitExceededException.class);
					answers.add("rejected");
				}
			}
			assertThat(answers).as("on %s", backend)
				.containsExactly("sent on mail-1", "sent on mail-1", "sent on mail-1", "rejected", "rejected");
		}
	}

	@Configuration(proxyBeanMethods = false)
	@EnableAutoConfiguration
	@EnableAsync
	@Import(Mail.class)
	static class Application {

	}

	static class Mail {

		@Async
		@RateLimit(name = "mail", key = "#user", max = "3", window = "1h")
		public CompletableFuture<String> send(String user) {
			return CompletableFuture.completedFuture("sent on " + Thread.currentThread().getName());
		}

	}

}
