package io.github.limiter.spring.interceptor;

import java.util.List;

import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import io.github.limiter.RateLimitExceededException;
import io.github.limiter.spring.annotation.RateLimit;
import io.github.limiter.spring.autoconfigure.RateLimiterAutoConfiguration;
import io.github.limiter.testsupport.LoggedWarnings;

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
	void distinctArraysNeverShareAKey() {
		this.runner.run(context -> {
			Api api = context.getBean(Api.class);
			// Each call below is admitted: the limit is 1 per key, and no two of these arrays are equal.
			api.nested(new Object[] { "a, b" });
			api.nested(new Object[] { "a", "b" });
			api.nested(new Object[] { "{a}" });
			api.nested(new Object[] { new String[] { "a" } });
			api.nested(new Object[] { null });
			api.nested(new Object[] { "null" });
			api.nested(new Object[] { "a\\", "b" });
			api.nested(new Object[] { "a\\, b" });
			api.nested(new Object[] { new int[] { 1, 2 }, new String[0] });
			// Equal nested arrays are one key: their elements, not their identities.
			assertThatExceptionOfType(RateLimitExceededException.class)
				.isThrownBy(() -> api.nested(new Object[] { new int[] { 1, 2 }, new String[0] }))
				.satisfies(ex -> assertThat(ex.getRequests().get(0).key()).isEqualTo("{{1, 2}, {}}"));
			assertThatExceptionOfType(RateLimitExceededException.class)
				.isThrownBy(() -> api.nested(new Object[] { "a, b" }))
				.satisfies(ex -> assertThat(ex.getRequests().get(0).key()).isEqualTo("{a\\, b}"));
			assertThatExceptionOfType(RateLimitExceededException.class)
				.isThrownBy(() -> api.nested(new Object[] { null }))
				.satisfies(ex -> assertThat(ex.getRequests().get(0).key()).isEqualTo("{\\null}"));
		});
	}

	@Test
	void collectionsMapsAndOptionalsAreKeyedByTheirElementsEscaped() {
		this.runner.run(context -> {
			Api api = context.getBean(Api.class);
			// Each call below is admitted: the limit is 1 per key, and no two of these values print alike.
			api.any(List.of("a, b"));
			api.any(List.of("a", "b"));
			api.any(java.util.Map.of("m", "x, n=y"));
			api.any(new java.util.TreeMap<>(java.util.Map.of("m", "x", "n", "y")));
			api.any(java.util.Arrays.asList("null", null));
			api.any(java.util.Optional.of("[a]"));
			api.any(java.util.Optional.empty());
			// Plain elements print as toString() prints them; an array in a list prints by its elements.
			assertThatExceptionOfType(RateLimitExceededException.class).isThrownBy(() -> api.any(List.of("a", "b")))
				.satisfies(ex -> assertThat(ex.getRequests().get(0).key()).isEqualTo("[a, b]"));
			assertThatExceptionOfType(RateLimitExceededException.class)
				.isThrownBy(() -> api.any(new java.util.TreeMap<>(java.util.Map.of("m", "x", "n", "y"))))
				.satisfies(ex -> assertThat(ex.getRequests().get(0).key()).isEqualTo("{m=x, n=y}"));
			assertThatExceptionOfType(RateLimitExceededException.class)
				.isThrownBy(() -> api.any(java.util.Map.of("m", "x, n=y")))
				.satisfies(ex -> assertThat(ex.getRequests().get(0).key()).isEqualTo("{m=x\\, n\\=y}"));
			api.any(List.of((Object) new String[] { "a" }));
			assertThatExceptionOfType(RateLimitExceededException.class)
				.isThrownBy(() -> api.any(List.of((Object) new String[] { "a" })))
				.satisfies(ex -> assertThat(ex.getRequests().get(0).key()).isEqualTo("[{a}]"));
		});
	}

	@Test
	void aKeyPrintedByItsIdentityIsSaid() {
		List<String> warnings;
		try (LoggedWarnings logged = LoggedWarnings.of(RateLimitInterceptor.class)) {
			this.runner.run(context -> {
				Api api = context.getBean(Api.class);
				api.order(new Order());
				api.order(new Order());
				api.nested(new Object[] { "a", new Order() });
				api.any(java.util.Optional.of(new Order()));
				api.tagged(new Tagged("u1", new String[] { "x" }));
				// A record whose own toString() leaves its lock out is keyed well: nothing to say.
				api.tenant(new Tenant("acme", new Object()));
				api.tenant(new Tenant("acme", new Object()));
				// Called off any request (as an @Async method runs): #ip is empty, and that is said.
				api.byIp();
			});
			warnings = logged.messages();
		}
		assertThat(warnings).hasSize(5);
		assertThat(warnings.get(0)).contains("evaluates to a " + Order.class.getName()
				+ ", which has no toString() of its own");
		assertThat(warnings.get(1)).contains("limit 'nested'")
			.contains("evaluates to a value holding a " + Order.class.getName() + ", which has no toString()");
		assertThat(warnings.get(2)).contains("limit 'any'")
			.contains("evaluates to a value holding a " + Order.class.getName() + ", which has no toString()");
		assertThat(warnings.get(3)).contains("limit 'tagged'")
			.contains("evaluates to a value holding a java.lang.String[], which has no toString()");
		assertThat(warnings.get(4)).contains("The key '#ip' of limit 'by-ip'")
			.contains("reads the caller, but the limiter sees no request on thread '" + Thread.currentThread().getName()
					+ "'")
			.contains("limiter.empty-key (shared) decides");
	}

	static class Order {

	}

	record Tagged(String user, String[] tags) {

	}

	record Tenant(String id, Object lock) {

		@Override
		public String toString() {
			return this.id;
		}

	}

	static class Api {

		@RateLimit(name = "batch", key = "#ids", max = "1", window = "1h")
		public void batch(String[] ids) {
		}

		@RateLimit(name = "codes", key = "#codes", max = "1", window = "1h")
		public void codes(int[] codes) {
		}

		@RateLimit(name = "nested", key = "#values", max = "1", window = "1h")
		public void nested(Object[] values) {
		}

		@RateLimit(name = "tenant", key = "#tenant", max = "5", window = "1h")
		public void tenant(Tenant tenant) {
		}

		@RateLimit(name = "by-ip", key = "#ip", max = "5", window = "1h")
		public void byIp() {
		}

		@RateLimit(name = "tagged", key = "#tagged", max = "5", window = "1h")
		public void tagged(Tagged tagged) {
		}

		@RateLimit(name = "any", key = "#value", max = "1", window = "1h")
		public void any(Object value) {
		}

		@RateLimit(name = "order", key = "#order", max = "5", window = "1h")
		public void order(Order order) {
		}

	}

}
