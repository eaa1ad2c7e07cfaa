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

	static class Overloads {

		@RateLimit(key = "#id", max = "1", window = "1h")
		void find(String id) {
		}

		@RateLimit(key = "#id", max = "1", window = "1h")
		void find(long id) {
		}

	}

}
