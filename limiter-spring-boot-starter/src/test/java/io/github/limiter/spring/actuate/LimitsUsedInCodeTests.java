package io.github.limiter.spring.actuate;

import java.time.Duration;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.springframework.boot.actuate.endpoint.InvalidEndpointRequestException;
import org.springframework.boot.actuate.endpoint.web.WebEndpointResponse;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import io.github.limiter.RateLimiter;
import io.github.limiter.algorithm.FixedWindow;
import io.github.limiter.algorithm.TokenBucket;
import io.github.limiter.spring.actuate.RateLimitersEndpoint.KeyState;
import io.github.limiter.spring.actuate.RateLimitersEndpoint.LimitDescriptor;
import io.github.limiter.spring.annotation.RateLimit;
import io.github.limiter.spring.autoconfigure.RateLimiterAutoConfiguration;
import io.github.limiter.spring.autoconfigure.RateLimiterEndpointAutoConfiguration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * Limits an application uses in code, through the {@link RateLimiter} bean, are listed next to the declared ones
 * once they have decided a call, and their keys are read and reset the same way; they are not retuned.
 */
class LimitsUsedInCodeTests {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(RateLimiterAutoConfiguration.class,
				RateLimiterEndpointAutoConfiguration.class))
		.withBean(Api.class)
		.withPropertyValues("limiter.backend=local", "management.endpoints.web.exposure.include=ratelimiters");

	private static final TokenBucket EXPORTS = TokenBucket.of("exports", 3, 3, Duration.ofMinutes(1));

	@Test
	void aLimitUsedInCodeIsListedAfterItsFirstDecisionWithItsStateAndReset() {
		this.runner.run(context -> {
			RateLimitersEndpoint endpoint = context.getBean(RateLimitersEndpoint.class);
			RateLimiter limiter = context.getBean(RateLimiter.class);
			assertThat(names(endpoint)).containsExactly("api");

			limiter.acquire(EXPORTS, "alice");
			limiter.acquire(EXPORTS, "alice");

			assertThat(names(endpoint)).containsExactly("api", "exports");
			LimitDescriptor exports = endpoint.limit("exports");
			assertThat(exports.getOrigin()).isEqualTo("code");
			assertThat(exports.getAlgorithm()).isEqualTo("TOKEN_BUCKET");
			assertThat(exports.getCapacity()).isEqualTo(3);
			assertThat(exports.getKeyExpression()).isNull();
			assertThat(exports.getCost()).isNull();
			assertThat(exports.getMethods()).isEmpty();
			assertThat(exports.getState()).isNull();
			assertThat(endpoint.limit("api").getOrigin()).isEqualTo("annotation");

			assertThat(((KeyState) endpoint.key("exports", "alice").getBody()).available()).isEqualTo(1);
			assertThat(endpoint.reset("exports", "alice").getStatus()).isEqualTo(204);
			assertThat(((KeyState) endpoint.key("exports", "alice").getBody()).available()).isEqualTo(3);
		});
	}

	@Test
	void aDeclaredNameStaysTheDeclaredLimitAndALimitInCodeIsNotRetuned() {
		this.runner.withPropertyValues("management.endpoint.ratelimiters.access=UNRESTRICTED").run(context -> {
			RateLimitersEndpoint endpoint = context.getBean(RateLimitersEndpoint.class);
			RateLimiter limiter = context.getBean(RateLimiter.class);
			limiter.acquire(FixedWindow.of("api", 99, Duration.ofSeconds(1)), "bob");
			limiter.acquire(EXPORTS, "bob");

			assertThat(endpoint.limit("api").getOrigin()).isEqualTo("annotation");
			assertThat(endpoint.limit("api").getCapacity()).isEqualTo(5);
			assertThatExceptionOfType(InvalidEndpointRequestException.class)
				.isThrownBy(() -> endpoint.retune("exports", "9", null, null, null, null, null, null, null, null, null,
						null))
				.withMessageContaining("'exports' is used in code through the RateLimiter bean");
			assertThat(endpoint.limit("exports").getCapacity()).isEqualTo(3);
		});
	}

	@Test
	void theLatestDefinitionUnderANameIsShownAndNamesAreBounded() {
		this.runner.run(context -> {
			RateLimitersEndpoint endpoint = context.getBean(RateLimitersEndpoint.class);
			RateLimiter limiter = context.getBean(RateLimiter.class);
			limiter.acquire(EXPORTS, "carol");
			limiter.acquire(TokenBucket.of("exports", 7, 7, Duration.ofMinutes(1)), "carol");
			assertThat(endpoint.limit("exports").getCapacity()).isEqualTo(7);

			for (int i = 0; i < LimitsInUse.MAX_NAMES + 500; i++) {
				limiter.acquire(FixedWindow.of("per-request-" + i, 1, Duration.ofSeconds(1)), "k");
			}
			// The declared limit, and at most the bound of names used in code.
			assertThat(names(endpoint)).hasSizeBetween(2, LimitsInUse.MAX_NAMES + 1).contains("api");
		});
	}

	private static List<String> names(RateLimitersEndpoint endpoint) {
		return endpoint.limits().limits().stream().map(LimitDescriptor::getName).toList();
	}

	static class Api {

		@RateLimit(name = "api", key = "#user", max = "5", window = "1m")
		public void call(String user) {
		}

	}

}
