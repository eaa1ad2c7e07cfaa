package io.github.limiter.spring.actuate;

import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.Test;
import org.springframework.boot.actuate.endpoint.web.WebEndpointResponse;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import io.github.limiter.RateLimiter;
import io.github.limiter.TimeSource;
import io.github.limiter.algorithm.Algorithm;
import io.github.limiter.backend.local.LocalBackend;
import io.github.limiter.spring.actuate.RateLimitersEndpoint.KeyState;
import io.github.limiter.spring.annotation.RateLimit;
import io.github.limiter.spring.autoconfigure.RateLimiterAutoConfiguration;
import io.github.limiter.spring.autoconfigure.RateLimiterEndpointAutoConfiguration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A key's state as the endpoint shows it, on a clock the test moves: what is available now, and how long until the
 * key is full again (not until it would be full had one more call been taken).
 */
class KeyStateTests {

	private static final long SECOND = 1_000_000;

	private final AtomicLong now = new AtomicLong(1_000 * SECOND);

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(RateLimiterAutoConfiguration.class,
				RateLimiterEndpointAutoConfiguration.class))
		.withBean(RateLimiter.class, () -> RateLimiter.of(LocalBackend.create((TimeSource) this.now::get, 1_000)))
		.withBean(Api.class)
		.withPropertyValues("limiter.backend=local", "management.endpoints.web.exposure.include=ratelimiters");

	@Test
	void aSlidingLogIsFullAgainWhenItsNewestEntryExpires() {
		this.runner.run(context -> {
			Api api = context.getBean(Api.class);
			api.login("dave");
			this.now.addAndGet(5 * SECOND);
			assertThat(state(context.getBean(RateLimitersEndpoint.class), "logins", "dave"))
				.isEqualTo(new KeyState("logins", "dave", 3, 2, 55_000, 0));
			api.login("dave");
			api.login("dave");
			this.now.addAndGet(10 * SECOND);
			// The oldest entry leaves in 45 s, the newest in 50 s.
			assertThat(state(context.getBean(RateLimitersEndpoint.class), "logins", "dave"))
				.isEqualTo(new KeyState("logins", "dave", 3, 0, 50_000, 45_000));
		});
	}

	@Test
	void aBucketIsFullAgainWhenWhatWasTakenHasRefilled() {
		this.runner.run(context -> {
			Api api = context.getBean(Api.class);
			api.hello("127.0.0.1");
			api.hello("127.0.0.1");
			// Two of five taken at once: full again in two seconds.
			assertThat(state(context.getBean(RateLimitersEndpoint.class), "greeting", "127.0.0.1"))
				.isEqualTo(new KeyState("greeting", "127.0.0.1", 5, 3, 2_000, 0));
			this.now.addAndGet(SECOND / 2);
			assertThat(state(context.getBean(RateLimitersEndpoint.class), "greeting", "127.0.0.1"))
				.isEqualTo(new KeyState("greeting", "127.0.0.1", 5, 3, 1_500, 0));
			this.now.addAndGet(2 * SECOND);
			assertThat(state(context.getBean(RateLimitersEndpoint.class), "greeting", "127.0.0.1"))
				.isEqualTo(new KeyState("greeting", "127.0.0.1", 5, 5, 0, 0));
		});
	}

	@Test
	void aFixedWindowIsFullAgainWhenItEnds() {
		this.runner.run(context -> {
			this.now.set(1_200 * SECOND + 15 * SECOND);
			context.getBean(Api.class).quote("10.0.0.1");
			assertThat(state(context.getBean(RateLimitersEndpoint.class), "quotes", "10.0.0.1"))
				.isEqualTo(new KeyState("quotes", "10.0.0.1", 10, 9, 45_000, 0));
		});
	}

	private static KeyState state(RateLimitersEndpoint endpoint, String limit, String key) {
		WebEndpointResponse<Object> response = endpoint.key(limit, key);
		assertThat(response.getStatus()).isEqualTo(200);
		return (KeyState) response.getBody();
	}

	static class Api {

		@RateLimit(name = "logins", key = "#user", max = "3", window = "1m", algorithm = Algorithm.SLIDING_WINDOW_LOG)
		public void login(String user) {
		}

		@RateLimit(name = "greeting", key = "#client", capacity = "5", max = "1", window = "1s",
				algorithm = Algorithm.TOKEN_BUCKET)
		public void hello(String client) {
		}

		@RateLimit(name = "quotes", key = "#client", max = "10", window = "1m", algorithm = Algorithm.FIXED_WINDOW)
		public void quote(String client) {
		}

	}

}
