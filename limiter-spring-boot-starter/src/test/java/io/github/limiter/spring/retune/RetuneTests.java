package io.github.limiter.spring.retune;

import java.time.Duration;
import java.util.Map;
import java.util.Set;

import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.util.TestPropertyValues;
import org.springframework.cloud.context.environment.EnvironmentChangeEvent;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.data.redis.connection.RedisConnectionFactory;

import io.github.limiter.RateLimitExceededException;
import io.github.limiter.spi.OverrideStore;
import io.github.limiter.spi.RateLimiterBackend;
import io.github.limiter.spring.actuate.RateLimitersEndpoint;
import io.github.limiter.spring.annotation.RateLimit;
import io.github.limiter.spring.autoconfigure.RateLimiterAutoConfiguration;
import io.github.limiter.spring.interceptor.AnnotationRateLimitOperationSource;
import io.github.limiter.spring.interceptor.RateLimitOperation;
import io.github.limiter.spring.interceptor.RateLimitOperationSource;
import io.github.limiter.testsupport.TestRedis;
import io.github.limiter.testsupport.WindowBoundaries;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

/**
 * Limits retuned while the application runs, from the environment and from runtime overrides: the new numbers apply
 * to the state already there (nothing is wiped), on every instance, and an invalid change changes nothing.
 */
class RetuneTests {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(RateLimiterAutoConfiguration.class))
		.withBean(Api.class)
		.withPropertyValues("limiter.backend=local", "limiter.policies.api.algorithm=fixed-window",
				"limiter.policies.api.max=3", "limiter.policies.api.window=1h");

	@Test
	void anEnvironmentChangeRetunesTheLimitAndKeepsWhatWasCounted() {
		this.runner.run(context -> {
			Api api = context.getBean(Api.class);
			oneWindowFor(Duration.ofSeconds(10));
			admit(api, "k", 3);
			assertThatExceptionOfType(RateLimitExceededException.class).isThrownBy(() -> api.call("k"));
			changeEnvironment(context, "limiter.policies.api.max=5");
			// 3 were counted under the old limit: 2 more fit under the new one, not 5.
			admit(api, "k", 2);
			assertThatExceptionOfType(RateLimitExceededException.class).isThrownBy(() -> api.call("k"));
			assertThat(operation(context).settingSources()).containsEntry("max", "limiter.policies.api.max");
		});
	}

	@Test
	void anInvalidEnvironmentChangeLeavesTheLimitsAsTheyWere() {
		this.runner.run(context -> {
			Api api = context.getBean(Api.class);
			changeEnvironment(context, "limiter.policies.api.max=0");
			assertThat(operation(context).limit().capacity()).isEqualTo(3);
			changeEnvironment(context, "limiter.policies.api.max=lots");
			assertThat(operation(context).limit().capacity()).as("a value that cannot be read").isEqualTo(3);
			changeEnvironment(context, "limiter.policies.api.max=4", "limiter.policies.api.capacity=9");
			assertThat(operation(context).limit().capacity()).as("capacity is not a fixed window's").isEqualTo(3);
			oneWindowFor(Duration.ofSeconds(10));
			admit(api, "k", 3);
			assertThatExceptionOfType(RateLimitExceededException.class).isThrownBy(() -> api.call("k"));
		});
	}

	@Test
	void settingsReadAtStartupThatAnEnvironmentChangeCannotApplyAreSaid() {
		this.runner.run(context -> {
			try (io.github.limiter.testsupport.LoggedWarnings warnings = io.github.limiter.testsupport.LoggedWarnings
				.of(RateLimitRetuner.class)) {
				changeEnvironment(context, "limiter.policies.api.max=5", "limiter.empty-key=reject",
						"limiter.headers.enabled=false");
				assertThat(warnings.messages()).containsExactly("The environment changed settings that are read when the "
						+ "application starts, and apply after a restart only: limiter.empty-key = REJECT (in force: "
						+ "SHARED), limiter.headers.enabled = false (in force: true)");
			}
			try (io.github.limiter.testsupport.LoggedWarnings warnings = io.github.limiter.testsupport.LoggedWarnings
				.of(RateLimitRetuner.class)) {
				// Back to what has been in force since the start: nothing waits for a restart.
				changeEnvironment(context, "limiter.empty-key=shared", "limiter.headers.enabled=true");
				assertThat(warnings.messages()).isEmpty();
			}
			assertThat(operation(context).limit().capacity()).as("the limit's own setting applies").isEqualTo(5);
		});
	}

	@org.springframework.boot.context.properties.ConfigurationProperties("app")
	public static class AppSettings {

		private String greeting = "one";

		public String getGreeting() {
			return this.greeting;
		}

		public void setGreeting(String greeting) {
			this.greeting = greeting;
		}

	}

	/**
	 * A refresh the starter would refuse at startup (a misspelt name, an empty prefix, a heartbeat out of its bounds) is
	 * refused, so that no restart fails on it later, and Spring Cloud still rebinds the application's other settings.
	 */
	@org.junit.jupiter.params.ParameterizedTest
	@org.junit.jupiter.params.provider.ValueSource(strings = { "limiter.failure.polcy=open", "limiter.key-prefix=",
			"limiter.key-prefix=a{1}", "limiter.failure.heartbeat=1", "limiter.retune.refresh=1ns" })
	void aRefreshTheStarterWouldRefuseAtStartupIsRefusedAndTheApplicationsOtherSettingsStillRebind(String bad) {
		this.runner
			.withConfiguration(AutoConfigurations
				.of(org.springframework.cloud.autoconfigure.ConfigurationPropertiesRebinderAutoConfiguration.class))
			.withUserConfiguration(AppSettingsConfiguration.class)
			.run(context -> {
				AppSettings app = context.getBean(AppSettings.class);
				String[] properties = { "app.greeting=two", bad, "limiter.policies.api.max=5" };
				TestPropertyValues.of(properties).applyTo(context);
				// As Spring Cloud publishes it: the context itself as the source, which its rebinder answers.
				context.publishEvent(new EnvironmentChangeEvent(context.getSourceApplicationContext(), Set.of(properties)));
				assertThat(app.getGreeting()).as("rebound by Spring Cloud").isEqualTo("two");
				assertThat(operation(context).limit().capacity()).as("the starter refused the whole change").isEqualTo(3);
			});
	}

	@org.springframework.context.annotation.Configuration(proxyBeanMethods = false)
	@org.springframework.boot.context.properties.EnableConfigurationProperties(AppSettings.class)
	static class AppSettingsConfiguration {

	}

	@Test
	void anOverrideWithAControlCharacterIsRefusedOnEveryBackendAndNeverPrintedRaw() {
		this.runner.run(context -> {
			RateLimitRetuner retuner = context.getBean(RateLimitRetuner.class);
			org.assertj.core.api.Assertions.assertThatIllegalStateException()
				.isThrownBy(() -> retuner.override("api", Map.of("max", "5\nFAKE LOG LINE")))
				.withMessage("Runtime override 'max' of limit 'api' contains a control character (a line break?): "
						+ "5\\u000aFAKE LOG LINE");
			assertThat(operation(context).limit().capacity()).isEqualTo(3);
		});
	}

	@Test
	void aRuntimeOverrideWinsOverEverySettingAndCanBeRemoved() {
		this.runner.run(context -> {
			Api api = context.getBean(Api.class);
			RateLimitRetuner retuner = context.getBean(RateLimitRetuner.class);
			oneWindowFor(Duration.ofSeconds(10));
			admit(api, "k", 3);
			RateLimitOperation operation = retuner.override("api", Map.of("max", "4"));
			assertThat(operation.limit().capacity()).isEqualTo(4);
			assertThat(operation.settingSources()).containsEntry("max", "runtime override 'max'")
				.containsEntry("window", "limiter.policies.api.window");
			admit(api, "k", 1);
			assertThatExceptionOfType(RateLimitExceededException.class).isThrownBy(() -> api.call("k"));
			assertThat(retuner.overrides()).isEqualTo(Map.of("api", Map.of("max", "4")));
			retuner.override("api", Map.of());
			assertThat(operation(context).limit().capacity()).isEqualTo(3);
			assertThat(retuner.overrides()).isEmpty();
		});
	}

	@Test
	void anInvalidOverrideIsRefusedNamingTheSettingAndTheValueAndChangesNothing() {
		this.runner.run(context -> {
			RateLimitRetuner retuner = context.getBean(RateLimitRetuner.class);
			assertThatIllegalStateException().isThrownBy(() -> retuner.override("api", Map.of("max", "0")))
				.withMessage("Invalid @RateLimit on " + Api.class.getName() + ".call(java.lang.String): "
						+ "runtime override 'max' = '0' must be positive");
			assertThatIllegalStateException().isThrownBy(() -> retuner.override("api", Map.of("window", "soon")))
				.withMessageContaining("runtime override 'window' = 'soon' cannot be read");
			assertThatIllegalArgumentException().isThrownBy(() -> retuner.override("api", Map.of("algorithm", "token-bucket")))
				.withMessageStartingWith("Runtime override 'algorithm' of limit 'api' is not a setting that can change at runtime");
			assertThatIllegalArgumentException().isThrownBy(() -> retuner.override("nope", Map.of("max", "1")))
				.withMessage("There is no limit named 'nope'");
			assertThat(operation(context).limit().capacity()).isEqualTo(3);
			assertThat(retuner.overrides()).isEmpty();
		});
	}

	@Test
	void overridesAreSharedThroughRedisAppliedByEveryInstanceAndFoundByARestartedOne() {
		String prefix = TestRedis.uniquePrefix();
		// A connection factory per instance, each closed with its context.
		ApplicationContextRunner shared = this.runner
			.withBean(RedisConnectionFactory.class, TestRedis::lettuce)
			.withPropertyValues("limiter.backend=redis", "limiter.key-prefix=" + prefix, "limiter.retune.refresh=100ms",
					"limiter.failure.deadline=5s", "limiter.failure.max-deadline=5s");
		shared.run(one -> shared.run(other -> {
			Api api = other.getBean(Api.class);
			// Up to 30 s for the override to reach the other instance, then the last calls.
			oneWindowFor(Duration.ofSeconds(45));
			admit(api, "k", 2);
			one.getBean(RateLimitRetuner.class).override("api", Map.of("max", "5"));
			long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
			while (operation(other).limit().capacity() != 5 && System.nanoTime() < deadline) {
				Thread.sleep(20);
			}
			assertThat(operation(other).settingSources()).containsEntry("max", "runtime override 'max'");
			// 2 of the 5 were taken before the change, on the key both instances share.
			admit(api, "k", 3);
			assertThatExceptionOfType(RateLimitExceededException.class).isThrownBy(() -> api.call("k"));
		}));
		shared.run(restarted -> assertThat(operation(restarted).limit().capacity()).isEqualTo(5));
	}

	@Test
	void anOverrideInTheBackendThatCannotApplyIsSkippedAndTheOthersApply() {
		String prefix = TestRedis.uniquePrefix();
		this.runner.withBean(RedisConnectionFactory.class, TestRedis::lettuce)
			.withPropertyValues("limiter.backend=redis", "limiter.key-prefix=" + prefix, "limiter.retune.refresh=100ms",
					"limiter.failure.deadline=5s", "limiter.failure.max-deadline=5s")
			.run(context -> {
				// Written to the backend by something else than this application's checks.
				OverrideStore store = (OverrideStore) context.getBean(RateLimiterBackend.class);
				store.override("api", Map.of("max", "0")).toCompletableFuture().join();
				store.override("other", Map.of("max", "7")).toCompletableFuture().join();
				RateLimitRetuner retuner = context.getBean(RateLimitRetuner.class);
				long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
				while (!retuner.overrides().containsKey("other") && System.nanoTime() < deadline) {
					Thread.sleep(20);
				}
				assertThat(retuner.overrides()).isEqualTo(Map.of("other", Map.of("max", "7")));
				Map<String, RateLimitOperation> limits = AnnotationRateLimitOperationSource
					.byLimit(context.getBean(RateLimitOperationSource.class).rateLimitedMethods());
				assertThat(limits.get("other").limit().capacity()).isEqualTo(7);
				assertThat(limits.get("api").limit().capacity()).isEqualTo(3);
			});
	}

	/** A store on a blocking client (Jedis without Lettuce) that answers only after a long while, on the caller. */
	static final class BlockingStore implements OverrideStore {

		@Override
		public java.util.concurrent.CompletionStage<Map<String, Map<String, String>>> overrides() {
			sleep();
			return java.util.concurrent.CompletableFuture.completedFuture(Map.of());
		}

		@Override
		public java.util.concurrent.CompletionStage<Map<String, Map<String, String>>> override(String limit,
				Map<String, String> settings) {
			sleep();
			return java.util.concurrent.CompletableFuture.completedFuture(Map.of());
		}

		private static void sleep() {
			try {
				Thread.sleep(5_000);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
		}

	}

	@Test
	void aStoreThatBlocksItsCallerIsStillHeldToTheTimeoutAndItsReadsHoldNoLock() {
		this.runner.withPropertyValues("limiter.retune.timeout=300ms").run(context -> {
			RateLimitRetuner retuner = new RateLimitRetuner(
					(AnnotationRateLimitOperationSource) context.getBean(RateLimitOperationSource.class),
					context.getEnvironment(), new BlockingStore(), Duration.ofSeconds(5), Duration.ofMillis(300));
			Thread reader = new Thread(retuner::readStore);
			reader.start();
			long start = System.nanoTime();
			assertThatExceptionOfType(io.github.limiter.spi.BackendException.class)
				.isThrownBy(() -> retuner.override("api", Map.of("max", "5")))
				.withMessageContaining("within 300ms");
			// The override waited for neither the reader's 5 s nor its own, only for its bound.
			assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(4));
			reader.join();
			assertThat(operation(context).limit().capacity()).isEqualTo(3);
		});
	}

	/**
	 * Redis cannot store the override: the endpoint answers 503 (no exception for the web layer to log again as an
	 * error), and this instance changes nothing.
	 */
	@Test
	void anOverrideRedisCannotStoreIsA503AndChangesNothing() {
		io.github.limiter.testsupport.RedisProcess redis = io.github.limiter.testsupport.RedisProcess.start();
		org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory factory = new org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory(
				new org.springframework.data.redis.connection.RedisStandaloneConfiguration("127.0.0.1", redis.port()));
		factory.afterPropertiesSet();
		factory.start();
		try {
			this.runner.withBean(RedisConnectionFactory.class, () -> factory)
				.withPropertyValues("limiter.backend=redis", "limiter.key-prefix=" + TestRedis.uniquePrefix(),
						"limiter.retune.timeout=300ms")
				.run(context -> {
					RateLimitersEndpoint endpoint = new RateLimitersEndpoint(
							context.getBean(RateLimitOperationSource.class), context.getBean(io.github.limiter.RateLimiter.class),
							"redis", context.getBean(RateLimitRetuner.class), null);
					redis.freeze();
					try {
						org.springframework.boot.actuate.endpoint.web.WebEndpointResponse<Object> answer = endpoint
							.retune("api", "9", null, null, null, null, null, null, null, null, null, null);
						assertThat(answer.getStatus()).isEqualTo(503);
						assertThat(answer.getBody().toString()).contains("Could not store the overrides of limit 'api'");
					}
					finally {
						redis.resume();
					}
					assertThat(operation(context).limit().capacity()).as("nothing changed here").isEqualTo(3);
				});
		}
		finally {
			factory.destroy();
			redis.close();
		}
	}

	@Test
	void theEndpointTakesEverySettingThatCanBeOverriddenAndNoOther() {
		java.lang.reflect.Method retune = java.util.Arrays.stream(RateLimitersEndpoint.class.getMethods())
			.filter(method -> method.getName().equals("retune"))
			.findFirst()
			.orElseThrow();
		java.util.List<String> parameters = java.util.Arrays.stream(retune.getParameters())
			.map(java.lang.reflect.Parameter::getName)
			.filter(name -> !name.equals("name"))
			.sorted()
			.toList();
		assertThat(parameters).isEqualTo(AnnotationRateLimitOperationSource.tunableSettings().stream().sorted().toList());
	}

	private static void changeEnvironment(ConfigurableApplicationContext context, String... properties) {
		TestPropertyValues.of(properties).applyTo(context);
		context.publishEvent(new EnvironmentChangeEvent(context, Set.of(properties)));
	}

	private static RateLimitOperation operation(ConfigurableApplicationContext context) {
		return AnnotationRateLimitOperationSource.byLimit(context.getBean(RateLimitOperationSource.class)
			.rateLimitedMethods()).get("api");
	}

	/**
	 * Waits, if need be, until the current window of the policy has room for calls that count on one window: the
	 * fixed window of an hour is aligned to the epoch (on the local backend's clock, or Redis's on this machine, the
	 * same), and a boundary between the calls would start a fresh count.
	 */
	private static void oneWindowFor(Duration needed) throws InterruptedException {
		WindowBoundaries.awayFromTheEndOfTheWindow(Duration.ofHours(1), needed);
	}

	private static void admit(Api api, String key, int calls) {
		for (int i = 0; i < calls; i++) {
			api.call(key);
		}
	}

	static class Api {

		@RateLimit(name = "api", key = "#key", policy = "api")
		public void call(String key) {
		}

		@RateLimit(name = "other", key = "#key", policy = "api")
		public void other(String key) {
		}

	}

}
