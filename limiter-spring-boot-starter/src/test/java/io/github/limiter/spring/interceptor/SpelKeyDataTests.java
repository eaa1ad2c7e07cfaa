package io.github.limiter.spring.interceptor;

import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import io.github.limiter.Decision;
import io.github.limiter.LimitRequest;
import io.github.limiter.Operation;
import io.github.limiter.RateLimitExceededException;
import io.github.limiter.RateLimiter;
import io.github.limiter.spring.annotation.RateLimit;
import io.github.limiter.spring.autoconfigure.RateLimiterAutoConfiguration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * Request data used as a key is only data: an argument that looks like SpEL is never evaluated.
 */
class SpelKeyDataTests {

	static volatile boolean executed;

	@Test
	void anArgumentHoldingAnExpressionStaysAString() {
		new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(RateLimiterAutoConfiguration.class))
			.withBean(Api.class)
			.withPropertyValues("limiter.backend=local")
			.run(context -> {
				String hostile = "T(io.github.limiter.spring.interceptor.SpelKeyDataTests).execute()";
				Api api = context.getBean(Api.class);
				api.call(hostile);
				assertThatExceptionOfType(RateLimitExceededException.class).isThrownBy(() -> api.call(hostile))
					.satisfies(ex -> assertThat(ex.getRequests().get(0).key()).isEqualTo(hostile));
				assertThat(executed).isFalse();
				RateLimiter limiter = context.getBean(RateLimiter.class);
				Decision state = limiter.decide(
						java.util.List.of(LimitRequest.of(ex(context).limit(), "#{" + hostile + "}")), Operation.CHECK);
				assertThat(state.allowed()).as("another literal string, another bucket").isTrue();
				assertThat(executed).isFalse();
			});
	}

	private static RateLimitOperation ex(org.springframework.context.ApplicationContext context) {
		return context.getBean(RateLimitOperationSource.class).rateLimitedMethods().iterator().next().operations().get(0);
	}

	public static boolean execute() {
		executed = true;
		return true;
	}

	static class Api {

		@RateLimit(key = "#input", max = "1", window = "1h")
		public void call(String input) {
		}

	}

}
