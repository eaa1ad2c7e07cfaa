package io.github.limiter.spring.interceptor;

import java.util.stream.Stream;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import io.github.limiter.spring.annotation.RateLimit;
import io.github.limiter.spring.autoconfigure.RateLimiterAutoConfiguration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A corpus of bad configurations, given through placeholders and properties: each fails startup with a message
 * naming the method or the property, the attribute and the value; each good one starts and limits.
 */
class BadConfigurationCorpusTests {

	private static final String METHOD = "Invalid @RateLimit on " + Corpus.class.getName() + ".call(java.lang.String): ";

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(RateLimiterAutoConfiguration.class))
		.withBean(Corpus.class)
		.withPropertyValues("limiter.backend=local");

	static Stream<Arguments> bad() {
		return Stream.of(
				Arguments.of("t.max=0", METHOD + "attribute 'max' = '0' must be positive"),
				Arguments.of("t.max=-1", METHOD + "attribute 'max' = '-1' must be positive"),
				Arguments.of("t.max=9007199254740992", "capacity must be at most 1000000000000000 but was 9007199254740992"),
				Arguments.of("t.policy=fixed,t.max=9007199254740992", "limit must be at most 1000000000000000 but was 9007199254740992"),
				Arguments.of("t.max=9223372036854775807", "capacity must be at most 1000000000000000"),
				Arguments.of("t.max=ten", METHOD + "attribute 'max' = 'ten' cannot be read"),
				Arguments.of("t.max=1.5", METHOD + "attribute 'max' = '1.5' cannot be read"),
				Arguments.of("t.window=0", METHOD + "attribute 'window' = '0' must be a positive duration"),
				Arguments.of("t.window=-1ms", METHOD + "attribute 'window' = '-1ms' must be a positive duration"),
				Arguments.of("t.window=3661d", "refill period must be at most 3660 days"),
				Arguments.of("t.window=1x", METHOD + "attribute 'window' = '1x' cannot be read"),
				Arguments.of("t.window=PT", METHOD + "attribute 'window' = 'PT' cannot be read"),
				Arguments.of("t.window=1ns", "refill period must be at least one microsecond"),
				Arguments.of("t.cost=0", METHOD + "attribute 'cost' = '0' must be positive"),
				Arguments.of("t.cost=-5", METHOD + "attribute 'cost' = '-5' must be positive"),
				Arguments.of("t.cost=11", METHOD + "attribute 'cost' = '11' exceeds the capacity 10"),
				Arguments.of("t.policy=nope", METHOD + "attribute 'policy' = 'nope' names no policy"),
				Arguments.of("t.burst=3", METHOD + "attribute 'burst' = '3' is not accepted by the TOKEN_BUCKET algorithm"),
				Arguments.of("t.calendar=day", METHOD + "attribute 'calendar' = 'day' is not accepted by the TOKEN_BUCKET algorithm"),
				Arguments.of("t.zone=UTC", METHOD + "attribute 'zone' = 'UTC' is not accepted by the TOKEN_BUCKET algorithm without a calendar"),
				Arguments.of("t.max-wait=-1s", METHOD + "attribute 'maxWait' = '-1s' must not be negative"),
				Arguments.of("t.max-wait=200000d", METHOD + "attribute 'maxWait' = '200000d' must be at most 3660 days"),
				Arguments.of("t.on-failure=maybe", METHOD + "attribute 'onFailure' = 'maybe' cannot be read: expected one of open, closed, local"),
				Arguments.of("t.shadow=perhaps", METHOD + "attribute 'shadow' = 'perhaps' cannot be read"),
				Arguments.of("t.max=2000000000,t.window=1s", "above one permit per nanosecond"),
				Arguments.of("t.policy=fixed,t.capacity=5", METHOD + "attribute 'capacity' = '5' is not accepted by the FIXED_WINDOW algorithm"),
				Arguments.of("t.policy=fixed,t.calendar=year", METHOD + "attribute 'calendar' = 'year' cannot be read"),
				Arguments.of("t.policy=fixed,t.calendar=day,t.zone=Mars/Olympus", METHOD + "attribute 'zone' = 'Mars/Olympus' cannot be read"),
				Arguments.of("t.policy=leaky,t.burst=-1", METHOD + "attribute 'burst' = '-1' must not be negative"),
				Arguments.of("t.policy=log,t.max=2000000", "limit must be at most 1000000 (one stored entry per permit)"),
				Arguments.of("limiter.policies.fixed.max=0", "Invalid limiter.policies.fixed.max = '0': must be positive"),
				Arguments.of("limiter.policies.unused.delay=-1", "Invalid limiter.policies.unused.delay = '-1': must not be negative"),
				Arguments.of("limiter.policies.fixed.window=-1ms", "Invalid limiter.policies.fixed.window = '-1ms': must be a positive duration"),
				Arguments.of("limiter.defaults.cost=0", "Invalid limiter.defaults.cost = '0': must be positive"),
				Arguments.of("limiter.policies.fixed.max-wait=-1s", "Invalid limiter.policies.fixed.max-wait = '-1s': must not be negative"),
				Arguments.of("limiter.policies.fixed.max-wait=3661d", "Invalid limiter.policies.fixed.max-wait = '3661d': must be at most 3660 days"),
				Arguments.of("limiter.redis.denial-cache-size=-1",
						"Invalid limiter.redis.denial-cache-size = '-1': must be 0 (off) or a number of keys"),
				Arguments.of("limiter.local.max-keys=0", "Invalid limiter.local.max-keys = '0': must be positive"),
				Arguments.of("limiter.failure.polcy=open", "limiter.failure.polcy"),
				Arguments.of("limiter.policies.fixed.maximum=5", "limiter.policies.fixed.maximum"),
				Arguments.of("limiter.key-prefix=app{1}:", "Invalid limiter.key-prefix = 'app{1}:': must not contain braces"),
				Arguments.of("limiter.key-prefix=", "Invalid limiter.key-prefix = '' ("),
				Arguments.of("limiter.failure.deadline=", "Invalid limiter.failure.deadline = '' "),
				Arguments.of("limiter.failure.policy=", "Invalid limiter.failure.policy = '' "),
				// A number without a unit is milliseconds: a heartbeat of 1 would send Redis thousands of probes a second.
				Arguments.of("limiter.failure.heartbeat=1", "Invalid limiter.failure.heartbeat = '1ms': must be at "
						+ "least 10ms (a number without a unit is milliseconds)"),
				Arguments.of("limiter.retune.refresh=1ns", "Invalid limiter.retune.refresh = '1ns': must be at least"),
				Arguments.of("limiter.retune.timeout=500us", "Invalid limiter.retune.timeout = '500us': must be at least 1ms"),
				Arguments.of("limiter.failure.open-duration=200000d", "Invalid limiter.failure.open-duration = '200000d': "
						+ "must be at most 3660 days"),
				Arguments.of("limiter.failure.max-deadline=200000d", "Invalid limiter.failure.max-deadline = '200000d': "
						+ "must be at most 3660 days"),
				Arguments.of("t.delay=1", METHOD + "attribute 'delay' = '1' is not accepted by the TOKEN_BUCKET algorithm "
						+ "(only by LEAKY_BUCKET)"),
				Arguments.of("t.policy=leaky,t.burst=2,t.delay=3", METHOD + "attribute 'delay' = '3' must be between 0 "
						+ "and the burst (2)"),
				Arguments.of("t.policy=leaky,t.burst=2,t.nodelay=true,t.delay=1", METHOD + "attribute 'delay' = '1' "
						+ "cannot be combined with attribute 'nodelay' = 'true'"),
				Arguments.of("t.warmup=-5s", METHOD + "attribute 'warmup' = '-5s' must be a positive duration, or 0 for none"),
				Arguments.of("t.warmup=soon", METHOD + "attribute 'warmup' = 'soon' cannot be read"),
				Arguments.of("t.policy=fixed,t.warmup=10s", METHOD + "attribute 'warmup' = '10s' is not accepted by the "
						+ "FIXED_WINDOW algorithm (only by TOKEN_BUCKET)"),
				Arguments.of("t.warmup=3661d", "warm-up must be at most 3660 days"),
				Arguments.of("limiter.policies.fixed.algorithm=token-bucket,limiter.policies.fixed.warmup=-1s,t.policy=fixed",
						"Invalid limiter.policies.fixed.warmup = '-1s': must be a positive duration, or 0 for none"));
	}

	@ParameterizedTest(name = "{0}")
	@MethodSource("bad")
	void badConfigurationFailsStartupNamingWhatIsWrong(String properties, String message) {
		this.runner.withPropertyValues(policies()).withPropertyValues(properties.split(",")).run(context -> {
			assertThat(context).hasFailed();
			assertThat(context.getStartupFailure()).rootCause().hasMessageContaining(message);
		});
	}

	/**
	 * Environment variables and system properties are set for the whole machine, not for this starter alone: a name
	 * there that it does not know (a Kubernetes service called {@code limiter}, the tests' own
	 * {@code LIMITER_REDIS_SERVER}) is no typo and does not stop the application, while the same name in the
	 * application's configuration does; a known one binds from there.
	 */
	@Test
	void unknownNamesFromTheEnvironmentAreNotTyposButKnownOnesBind() {
		java.util.Map<String, Object> variables = java.util.Map.of("LIMITER_REDIS_SERVER", "/usr/bin/redis-server",
				"LIMITER_PORT", "tcp://10.0.0.7:80", "LIMITER_SERVICE_HOST", "10.0.0.7", "LIMITER_EMPTY_KEY", "reject");
		ApplicationContextRunner machine = this.runner.withSystemProperties("limiter.redis.server=/x")
			.withInitializer(context -> context.getEnvironment()
				.getPropertySources()
				.replace(org.springframework.core.env.StandardEnvironment.SYSTEM_ENVIRONMENT_PROPERTY_SOURCE_NAME,
						new org.springframework.core.env.SystemEnvironmentPropertySource(
								org.springframework.core.env.StandardEnvironment.SYSTEM_ENVIRONMENT_PROPERTY_SOURCE_NAME,
								variables)));
		machine.run(context -> {
			assertThat(context).hasNotFailed();
			assertThat(context.getBean(io.github.limiter.spring.autoconfigure.RateLimiterProperties.class).getEmptyKey())
				.isEqualTo(io.github.limiter.spring.autoconfigure.RateLimiterProperties.EmptyKey.REJECT);
		});
		machine.withPropertyValues("limiter.redis.server=/x").run(context -> {
			assertThat(context).hasFailed();
			assertThat(context.getStartupFailure()).rootCause().hasMessageContaining("limiter.redis.server");
		});
		// A known name given nothing (an unset ${POLICY} in a compose file) is refused wherever it comes from.
		this.runner.withInitializer(context -> context.getEnvironment()
			.getPropertySources()
			.replace(org.springframework.core.env.StandardEnvironment.SYSTEM_ENVIRONMENT_PROPERTY_SOURCE_NAME,
					new org.springframework.core.env.SystemEnvironmentPropertySource(
							org.springframework.core.env.StandardEnvironment.SYSTEM_ENVIRONMENT_PROPERTY_SOURCE_NAME,
							java.util.Map.of("LIMITER_FAILURE_POLICY", ""))))
			.run(context -> {
				assertThat(context).hasFailed();
				assertThat(context.getStartupFailure()).rootCause().hasMessageContaining("Invalid limiter.failure.policy = ''");
			});
	}

	@ParameterizedTest(name = "{0}")
	@MethodSource("unknownAlgorithm")
	void anUnknownAlgorithmFailsBindingNamingTheProperty(String properties) {
		this.runner.withPropertyValues(policies()).withPropertyValues(properties).run(context -> {
			assertThat(context).hasFailed();
			assertThat(context.getStartupFailure()).hasMessageContaining("limiter.policies.fixed.algorithm");
		});
	}

	@Test
	void anUnknownLocalClockFailsBindingNamingThePropertyAndTheValue() {
		this.runner.withPropertyValues(policies()).withPropertyValues("limiter.local.clock=fast").run(context -> {
			assertThat(context).hasFailed();
			// What Boot's failure analysis prints: the property, its value and the reason.
			assertThat(context.getStartupFailure()).hasMessageContaining("limiter.local.clock");
			Throwable failure = context.getStartupFailure();
			while (!(failure instanceof org.springframework.boot.context.properties.bind.BindException)) {
				failure = failure.getCause();
			}
			assertThat(((org.springframework.boot.context.properties.bind.BindException) failure).getProperty().getValue())
				.isEqualTo("fast");
		});
	}

	static Stream<String> unknownAlgorithm() {
		return Stream.of("limiter.policies.fixed.algorithm=foo", "limiter.policies.fixed.algorithm=token-buckets");
	}

	static Stream<String> good() {
		return Stream.of("t.window=1ms", "t.window=366d", "t.max=1000000000000000,t.window=3660d,t.policy=fixed",
				"t.policy=fixed,t.calendar=week,t.zone=Asia/Tokyo,t.window=", "t.policy=leaky,t.burst=0", "t.policy=log,t.max=1000000",
				"t.max-wait=0s", "t.on-failure=closed", "t.shadow=true",
				// An attribute's text is bound like the property of the same name: these read as they would in YAML.
				"t.shadow=yes", "t.max-wait=500", "t.scope=per-instance", "t.on-failure=CLOSED",
				"t.policy=leaky,t.burst=5,t.delay=2", "t.warmup=10s", "t.warmup=0", "t.capacity=20,t.warmup=PT1M");
	}

	@ParameterizedTest(name = "{0}")
	@MethodSource("good")
	void goodConfigurationStartsAndLimits(String properties) {
		this.runner.withPropertyValues(policies()).withPropertyValues(properties.split(",")).run(context -> {
			assertThat(context).hasNotFailed();
			context.getBean(Corpus.class).call("user");
		});
	}

	@ParameterizedTest(name = "{0}")
	@MethodSource("good")
	void everyAcceptedCombinationStoresKeysWithAPositiveTtlOnRedis(String properties) {
		String prefix = io.github.limiter.testsupport.TestRedis.uniquePrefix();
		org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory factory = io.github.limiter.testsupport.TestRedis
			.lettuce();
		try {
			this.runner.withBean(org.springframework.data.redis.connection.RedisConnectionFactory.class, () -> factory)
				.withPropertyValues("limiter.backend=redis", "limiter.key-prefix=" + prefix, "limiter.failure.deadline=5s",
						"limiter.failure.max-deadline=5s")
				.withPropertyValues(policies())
				.withPropertyValues(properties.split(","))
				.run(context -> {
					assertThat(context).hasNotFailed();
					java.util.regex.Matcher zone = java.util.regex.Pattern.compile("t\\.zone=([^,]+)").matcher(properties);
					if (properties.contains("t.calendar=") && zone.find()) {
						// A calendar window's key expires at its period's end, a midnight in its zone: not between the call
						// and the look for the key.
						io.github.limiter.testsupport.WindowBoundaries.awayFromMidnight(java.time.ZoneId.of(zone.group(1)),
								java.time.Duration.ofSeconds(10));
					}
					context.getBean(Corpus.class).call("user");
					io.github.limiter.testsupport.RedisProcess redis = io.github.limiter.testsupport.TestRedis.standalone();
					String keys = redis.command("KEYS", prefix + "*");
					java.util.List<String> names = keys.lines().filter(line -> line.startsWith(prefix)).toList();
					if (!properties.contains("1ms")) {
						// (a state of a millisecond is gone before it can be listed)
						assertThat(names).as("keys of %s", properties).isNotEmpty();
					}
					for (String name : names) {
						long ttl = Long.parseLong(redis.command("PTTL", name).trim().substring(1));
						// -1 would be a key without TTL; -2 is a key that expired since it was listed, 0 one with less
						// than a millisecond left (a window of 1 ms).
						assertThat(ttl == -2 || ttl >= 0).as("TTL of %s is %d", name, ttl).isTrue();
					}
				});
		}
		finally {
			factory.destroy();
		}
	}

	private static String[] policies() {
		return new String[] { "limiter.policies.fixed.algorithm=fixed-window",
				"limiter.policies.leaky.algorithm=leaky-bucket", "limiter.policies.log.algorithm=sliding-window-log" };
	}

	static class Corpus {

		@RateLimit(name = "corpus", key = "#p0", max = "${t.max:10}", window = "${t.window:1m}",
				cost = "${t.cost:}", policy = "${t.policy:}", capacity = "${t.capacity:}", burst = "${t.burst:}",
				calendar = "${t.calendar:}", zone = "${t.zone:}", maxWait = "${t.max-wait:}",
				onFailure = "${t.on-failure:}", shadow = "${t.shadow:}", scope = "${t.scope:}",
				nodelay = "${t.nodelay:}", delay = "${t.delay:}", warmup = "${t.warmup:}")
		public void call(String user) {
		}

	}

}
