package io.github.limiter.spring.interceptor;

import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import io.github.limiter.RateLimitExceededException;
import io.github.limiter.spring.annotation.RateLimit;
import io.github.limiter.spring.autoconfigure.RateLimiterAutoConfiguration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * A limit without a name is named after its method, {@code SimpleClassName.method}, with the parameter types when the
 * method is overloaded, so that two methods never share a limit by accident, whatever their visibility.
 */
class DefaultNameTests {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(RateLimiterAutoConfiguration.class))
		.withBean(Overloads.class)
		.withPropertyValues("limiter.backend=local");

	@Test
	void packagePrivateOverloadsAreTwoLimits() {
		this.runner.run(context -> {
			Overloads overloads = context.getBean(Overloads.class);
			overloads.find("42");
			overloads.find(42L);
			assertThatExceptionOfType(RateLimitExceededException.class).isThrownBy(() -> overloads.find("42"))
				.satisfies(ex -> assertThat(ex.getDecision().limitName()).isEqualTo("Overloads.find(String)"));
			assertThatExceptionOfType(RateLimitExceededException.class).isThrownBy(() -> overloads.find(42L))
				.satisfies(ex -> assertThat(ex.getDecision().limitName()).isEqualTo("Overloads.find(long)"));
		});
	}

	@Test
	void aNameDoesNotChangeWithTheCountOfBridges() {
		// A generic interface's method has a bridge, apply(Object): it always counted as an overload, and still does,
		// so that the limit keeps its name (and its keys) from one version to the next.
		this.runner.withBean(Handler.class).run(context -> {
			Handler handler = context.getBean(Handler.class);
			handler.apply("x");
			assertThatExceptionOfType(RateLimitExceededException.class).isThrownBy(() -> handler.apply("x"))
				.satisfies(ex -> assertThat(ex.getDecision().limitName()).isEqualTo("Handler.apply(String)"));
		});
	}

	static class Handler implements java.util.function.Function<String, String> {

		@Override
		@RateLimit(max = "1", window = "1h")
		public String apply(String value) {
			return value;
		}

	}

	static class Overloads {

		@RateLimit(key = "#id", max = "1", window = "1h")
		void find(String id) {
		}

		@RateLimit(key = "#id", max = "1", window = "1h")
		void find(long id) {
		}

	}

}
