package io.github.limiter.spring.actuate;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.springframework.boot.actuate.endpoint.web.WebEndpointResponse;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import io.github.limiter.RateLimiter;
import io.github.limiter.spring.annotation.RateLimit;
import io.github.limiter.spring.autoconfigure.RateLimiterAutoConfiguration;
import io.github.limiter.spring.autoconfigure.RateLimiterEndpointAutoConfiguration;
import io.github.limiter.testsupport.LoggedWarnings;
import io.github.limiter.testsupport.StubBackend;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A key's state is read within the endpoint's bound even from a store that blocks its caller (Jedis): a store that
 * does not answer in time is a 503, not a request thread held for as long as the store takes.
 */
class KeyStateReadTests {

	/** The endpoint over a store that does not answer. */
	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(RateLimiterAutoConfiguration.class,
				RateLimiterEndpointAutoConfiguration.class))
		.withBean(RateLimiter.class, () -> RateLimiter.of(new Stuck()))
		.withBean(Api.class)
		.withPropertyValues("limiter.backend=local", "management.endpoints.web.exposure.include=ratelimiters");

	@Test
	void aBlockingStoreThatDoesNotAnswerIsA503WithinTheBound() {
		this.runner.run(context -> {
			RateLimitersEndpoint endpoint = context.getBean(RateLimitersEndpoint.class);
			long start = System.nanoTime();
			WebEndpointResponse<Object> response = endpoint.key("api", "alice");
			long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
			assertThat(response.getStatus()).isEqualTo(503);
			assertThat(response.getBody().toString()).contains("no answer within 2000 ms");
			// Bounded by the read's 2 s, not by the store's 20 s (generous for a loaded machine).
			assertThat(millis).isLessThan(10_000);
		});
	}

	@Test
	void aKeyThatCannotBeReadIsLoggedOnceOnOneLine() {
		List<String> warnings;
		try (LoggedWarnings logged = LoggedWarnings.of(RateLimitersEndpoint.class)) {
			this.runner.run(context -> {
				RateLimitersEndpoint endpoint = context.getBean(RateLimitersEndpoint.class);
				// A key from the request's path, forging a log line of its own (the review's %0A).
				String forged = "bob\n2026-11-25T12:00:00.000Z  INFO 1 --- admin logged in";
				assertThat(endpoint.key("api", forged).getStatus()).isEqualTo(503);
				assertThat(endpoint.key("api", forged).getStatus()).isEqualTo(503);
			});
			warnings = logged.messages();
		}
		assertThat(warnings).as("one line for two reads within 10 s").hasSize(1);
		assertThat(warnings.get(0)).doesNotContain("\n").contains("bob\\u000a2026-11-25");
	}

	/** A store that blocks its caller and answers nothing for 20 s. */
	static final class Stuck extends StubBackend {

		Stuck() {
			super(requests -> {
				try {
					Thread.sleep(20_000);
				}
				catch (InterruptedException ex) {
					Thread.currentThread().interrupt();
				}
				return CompletableFuture.failedFuture(new IllegalStateException("no answer"));
			});
		}

		@Override
		public boolean blocksCaller() {
			return true;
		}

	}

	static class Api {

		@RateLimit(name = "api", key = "#user", max = "5", window = "1m")
		public void call(String user) {
		}

	}

}
