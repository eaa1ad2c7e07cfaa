package io.github.limiter.spring.interceptor;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;

import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import io.github.limiter.RateLimitExceededException;
import io.github.limiter.spring.annotation.RateLimit;
import io.github.limiter.spring.autoconfigure.RateLimiterAutoConfiguration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * What a key's value becomes: an array is keyed by its elements, so that equal arrays share a limit; a value printed
 * by its identity would make every call a key of its own, and the limit would never hold: that is said.
 */
class KeyValueTests {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(RateLimiterAutoConfiguration.class))
		.withBean(Api.class)
		.withPropertyValues("limiter.backend=local");

	@Test
	void equalArraysShareOneKey() {
		this.runner.run(context -> {
			Api api = context.getBean(Api.class);
			api.batch(new String[] { "a", "b" });
			assertThatExceptionOfType(RateLimitExceededException.class).isThrownBy(() -> api.batch(new String[] { "a", "b" }))
				.satisfies(ex -> assertThat(ex.getRequests().get(0).key()).isEqualTo("{a, b}"));
			api.batch(new String[] { "b", "a" });
			api.codes(new int[] { 1, 2 });
			assertThatExceptionOfType(RateLimitExceededException.class).isThrownBy(() -> api.codes(new int[] { 1, 2 }));
		});
	}

	@Test
	void aKeyPrintedByItsIdentityIsSaid() {
		// The interceptor logs through System.Logger, which is java.util.logging here: its records are read there.
		java.util.logging.Logger log = java.util.logging.Logger.getLogger(RateLimitInterceptor.class.getName());
		List<String> warnings = new CopyOnWriteArrayList<>();
		Handler handler = new Handler() {

			@Override
			public void publish(LogRecord record) {
				if (record.getLevel() == Level.WARNING) {
					warnings.add(record.getMessage());
				}
			}

			@Override
			public void flush() {
			}

			@Override
			public void close() {
			}

		};
		log.addHandler(handler);
		try {
			this.runner.run(context -> {
				Api api = context.getBean(Api.class);
				api.order(new Order());
				api.order(new Order());
			});
		}
		finally {
			log.removeHandler(handler);
		}
		assertThat(warnings).singleElement()
			.satisfies(warning -> assertThat(warning).contains("evaluates to a " + Order.class.getName()
					+ ", which has no toString() of its own"));
	}

	static class Order {

	}

	static class Api {

		@RateLimit(name = "batch", key = "#ids", max = "1", window = "1h")
		public void batch(String[] ids) {
		}

		@RateLimit(name = "codes", key = "#codes", max = "1", window = "1h")
		public void codes(int[] codes) {
		}

		@RateLimit(name = "order", key = "#order", max = "5", window = "1h")
		public void order(Order order) {
		}

	}

}
