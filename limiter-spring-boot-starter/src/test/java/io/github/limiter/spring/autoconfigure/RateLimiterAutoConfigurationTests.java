package io.github.limiter.spring.autoconfigure;

import java.util.concurrent.CompletableFuture;

import org.junit.jupiter.api.Test;
import org.redisson.api.RedissonClient;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import io.github.limiter.Decision;
import io.github.limiter.RateLimiter;
import io.github.limiter.TimeSource;
import io.github.limiter.backend.local.LocalBackend;
import io.github.limiter.backend.redis.RedisScriptBackend;
import io.github.limiter.backend.redisson.RedissonBackend;
import io.github.limiter.guard.GuardedBackend;
import io.github.limiter.spi.RateLimiterBackend;
import io.github.limiter.spring.interceptor.RateLimitAdvisor;
import io.github.limiter.spring.web.RateLimitExceptionHandler;
import io.github.limiter.testsupport.TestRedis;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Which backend the auto-configuration chooses, and when it steps aside.
 */
class RateLimiterAutoConfigurationTests {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(RateLimiterAutoConfiguration.class));

	private static LettuceConnectionFactory connectionFactory() {
		// Never connected by these tests: the backend connects on its first decision.
		return new LettuceConnectionFactory(new RedisStandaloneConfiguration("127.0.0.1", 1));
	}

	@Test
	void withoutRedisTheLocalBackendIsUsed() {
		this.runner.run(context -> {
			assertThat(context).hasSingleBean(LocalBackend.class).hasSingleBean(RateLimiter.class);
			assertThat(context).hasSingleBean(RateLimitAdvisor.class);
			assertThat(context).doesNotHaveBean(RateLimitExceptionHandler.class);
		});
	}

	@Test
	void withoutBootsAopABeanWithAnInterfaceIsStillInjectableByItsClass() {
		// Only the limiter's auto-configuration: as with spring.aop.auto=false, the limiter registers the proxy creator.
		this.runner.withBean(GreeterImpl.class).withBean(GreeterClient.class).run(context -> {
			assertThat(context).hasNotFailed();
			GreeterImpl greeter = context.getBean(GreeterClient.class).greeter;
			assertThat(greeter.greet()).isEqualTo("hello");
			assertThat(org.junit.jupiter.api.Assertions.assertThrows(io.github.limiter.RateLimitExceededException.class,
					greeter::greet).getMessage()).contains("greeting");
		});
		this.runner.withPropertyValues("spring.aop.proxy-target-class=false").withBean(GreeterImpl.class).run(context -> {
			assertThat(context.getBean(Greeter.class)).isNotInstanceOf(GreeterImpl.class);
		});
	}

	@Test
	void anApplicationThatChoseInterfaceProxiesKeepsThem() {
		this.runner.withUserConfiguration(InterfaceProxies.class).withBean(GreeterImpl.class).run(context -> {
			assertThat(context).hasNotFailed();
			assertThat(org.springframework.aop.support.AopUtils.isJdkDynamicProxy(context.getBean(Greeter.class))).isTrue();
		});
	}

	@org.springframework.context.annotation.Configuration(proxyBeanMethods = false)
	@org.springframework.cache.annotation.EnableCaching(proxyTargetClass = false)
	static class InterfaceProxies {

		@org.springframework.context.annotation.Bean
		org.springframework.cache.CacheManager cacheManager() {
			return new org.springframework.cache.concurrent.ConcurrentMapCacheManager();
		}

	}

	interface Greeter {

		String greet();

	}

	static class GreeterImpl implements Greeter {

		@Override
		@io.github.limiter.spring.annotation.RateLimit(name = "greeting", max = "1", window = "1h")
		public String greet() {
			return "hello";
		}

	}

	static class GreeterClient {

		final GreeterImpl greeter;

		GreeterClient(GreeterImpl greeter) {
			this.greeter = greeter;
		}

	}

	@Test
	void aConnectionFactoryMeansTheRedisBackend() {
		this.runner.withBean(RedisConnectionFactory.class, RateLimiterAutoConfigurationTests::connectionFactory)
			.run(context -> assertThat(context).hasSingleBean(RedisScriptBackend.class).doesNotHaveBean(LocalBackend.class));
	}

	@Test
	void aRedissonClientMeansTheRedissonBackend() {
		RedissonClient redisson = TestRedis.redisson();
		try {
			this.runner.withBean(RedissonClient.class, () -> redisson)
				.withBean(RedisConnectionFactory.class, RateLimiterAutoConfigurationTests::connectionFactory)
				.run(context -> assertThat(context).hasSingleBean(RedissonBackend.class)
					.doesNotHaveBean(RedisScriptBackend.class));
		}
		finally {
			redisson.shutdown();
		}
	}

	@Test
	void aPropertyForcesTheBackend() {
		this.runner.withBean(RedisConnectionFactory.class, RateLimiterAutoConfigurationTests::connectionFactory)
			.withPropertyValues("limiter.backend=local")
			.run(context -> assertThat(context).hasSingleBean(LocalBackend.class).doesNotHaveBean(RedisScriptBackend.class));
	}

	@Test
	void aForcedBackendThatCannotBeCreatedFailsStartup() {
		this.runner.withPropertyValues("limiter.backend=redis").run(context -> {
			assertThat(context).hasFailed();
			assertThat(context.getStartupFailure()).rootCause()
				.hasMessage("limiter.backend=redis but no such backend can be created: there is no RedisConnectionFactory "
						+ "bean (add spring-boot-starter-data-redis)");
		});
	}

	@Test
	void aBackendOfTheApplicationWins() {
		this.runner.withBean(RedisConnectionFactory.class, RateLimiterAutoConfigurationTests::connectionFactory)
			.withBean("customBackend", RateLimiterBackend.class, CustomBackend::new)
			.run(context -> {
				assertThat(context).hasSingleBean(RateLimiterBackend.class).hasBean("customBackend");
				assertThat(context.getBean(RateLimiter.class).backend()).as("guarded by the deadline and failure policy")
					.isInstanceOfSatisfying(GuardedBackend.class,
							guarded -> assertThat(guarded.delegate()).isInstanceOf(CustomBackend.class));
			});
	}

	@Test
	void theLocalBackendReadsTheSystemClockUnlessTheTickingClockIsChosen() {
		this.runner.run(context -> assertThat(context.getBean(LocalBackend.class).clock()).isSameAs(TimeSource.SYSTEM));
		this.runner.withPropertyValues("limiter.local.clock=ticking")
			.run(context -> assertThat(context.getBean(LocalBackend.class).clock()).isSameAs(TimeSource.ticking()));
	}

	@Test
	void withoutSpringDataRedisOrRedissonOnTheClasspathTheLocalBackendIsUsed() {
		this.runner.withClassLoader(new FilteredClassLoader("org.springframework.data.redis", "org.redisson"))
			.run(context -> assertThat(context).hasSingleBean(LocalBackend.class));
	}

	@Test
	void anApplicationWhoseRedisDoesNotAnswerSaysSoAtStartup() throws Exception {
		// The guard logs through System.Logger, which is java.util.logging here: its records are read there.
		java.util.logging.Logger guardLog = java.util.logging.Logger.getLogger(
				io.github.limiter.guard.GuardedBackend.class.getName());
		java.util.List<java.util.logging.LogRecord> records = new java.util.concurrent.CopyOnWriteArrayList<>();
		java.util.logging.Handler handler = new java.util.logging.Handler() {

			@Override
			public void publish(java.util.logging.LogRecord record) {
				records.add(record);
			}

			@Override
			public void flush() {
			}

			@Override
			public void close() {
			}

		};
		guardLog.addHandler(handler);
		try {
			this.runner.withPropertyValues("limiter.backend=redis")
				.withBean(RedisConnectionFactory.class, () -> new LettuceConnectionFactory(
						new RedisStandaloneConfiguration("127.0.0.1", io.github.limiter.testsupport.RedisProcess.freePort())))
				.run(context -> {
					// No call is made: the heartbeat's first probe, sent when the limiter is created, finds the outage.
					long giveUp = System.nanoTime() + 20_000_000_000L;
					while (records.stream().noneMatch(r -> r.getLevel() == java.util.logging.Level.WARNING)
							&& System.nanoTime() < giveUp) {
						Thread.sleep(50);
					}
					assertThat(records).filteredOn(r -> r.getLevel() == java.util.logging.Level.WARNING)
						.singleElement()
						.satisfies(r -> assertThat(r.getMessage())
							.startsWith("Rate limiter backend failed a probe after the heartbeat")
							.contains("circuit open"));
				});
		}
		finally {
			guardLog.removeHandler(handler);
		}
	}

	@Test
	void aCleanShutdownWithdrawsThisInstanceFromTheCountAtOnce() {
		// The heartbeat is 10 s, so an instance gone from the count after close was withdrawn, not expired; and the
		// connection factory, a lifecycle bean the context stops on close, was still there to carry the withdrawal.
		String prefix = TestRedis.uniquePrefix();
		String instances = prefix + "instances";
		io.github.limiter.testsupport.RedisProcess redis = TestRedis.standalone();
		this.runner.withBean(RedisConnectionFactory.class, TestRedis::lettuce)
			.withPropertyValues("limiter.backend=redis", "limiter.key-prefix=" + prefix, "limiter.failure.heartbeat=10s")
			.run(context -> {
				long giveUp = System.nanoTime() + 20_000_000_000L;
				while (!redis.command("ZCARD", instances).startsWith(":1") && System.nanoTime() < giveUp) {
					Thread.sleep(20);
				}
				assertThat(redis.command("ZCARD", instances)).startsWith(":1");
				context.close();
				assertThat(redis.command("ZCARD", instances)).startsWith(":0");
			});
	}

	@Test
	void aChildContextThatClosesLeavesItsParentsGuardRunning() {
		// A child context finds the parent's rate limiter and uses it; closing the child must not stop the parent's
		// heartbeat nor withdraw the parent from the count.
		String prefix = TestRedis.uniquePrefix();
		String instances = prefix + "instances";
		io.github.limiter.testsupport.RedisProcess redis = TestRedis.standalone();
		this.runner.withBean(RedisConnectionFactory.class, TestRedis::lettuce)
			.withPropertyValues("limiter.backend=redis", "limiter.key-prefix=" + prefix, "limiter.failure.heartbeat=10s")
			.run(parent -> {
				long giveUp = System.nanoTime() + 20_000_000_000L;
				while (!redis.command("ZCARD", instances).startsWith(":1") && System.nanoTime() < giveUp) {
					Thread.sleep(20);
				}
				assertThat(redis.command("ZCARD", instances)).startsWith(":1");
				new ApplicationContextRunner().withParent(parent)
					.withConfiguration(AutoConfigurations.of(RateLimiterAutoConfiguration.class))
					.withPropertyValues("limiter.backend=redis", "limiter.key-prefix=" + prefix)
					.run(child -> assertThat(child.getBean(RateLimiter.class)).isSameAs(parent.getBean(RateLimiter.class)));
				assertThat(redis.command("ZCARD", instances)).as("the parent still counted").startsWith(":1");
				parent.close();
				assertThat(redis.command("ZCARD", instances)).as("withdrawn with its own context").startsWith(":0");
			});
	}

	@Test
	void healthIsDegradedAtOnceWhenNothingListensAndNeverWaitsForRedis() {
		new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(RateLimiterAutoConfiguration.class, RateLimiterHealthAutoConfiguration.class))
			.withPropertyValues("limiter.failure.heartbeat=100ms", "limiter.failure.max-deadline=200ms")
			.withBean(RedisConnectionFactory.class, () -> {
				LettuceConnectionFactory factory = new LettuceConnectionFactory(
						new RedisStandaloneConfiguration("127.0.0.1", io.github.limiter.testsupport.RedisProcess.freePort()));
				factory.afterPropertiesSet();
				return factory;
			})
			.run(context -> {
				Object indicator = context.getBean("rateLimiterHealthIndicator");
				long giveUp = System.nanoTime() + 10_000_000_000L;
				Object health;
				long slowest = 0;
				do {
					long start = System.nanoTime();
					health = indicator.getClass().getMethod("health").invoke(indicator);
					slowest = Math.max(slowest, (System.nanoTime() - start) / 1_000_000);
					Thread.sleep(20);
				}
				while (!health.toString().contains("DEGRADED") && System.nanoTime() < giveUp);
				Object status = health.getClass().getMethod("getStatus").invoke(health);
				assertThat(status).hasToString("DEGRADED");
				assertThat(health.toString()).contains("backend=redis").contains("circuit=OPEN")
					.contains("lastFailure=probe: ");
				assertThat(slowest).as("the check reads the guard's state").isLessThan(500);
			});
	}

	@Test
	void aFailurePropertyThatIsNotPositiveFailsAtStartupNamingIt() {
		assertStartupFailure("limiter.failure.max-deadline=0s",
				"Invalid limiter.failure.max-deadline = '0s': must be a positive duration");
		assertStartupFailure("limiter.failure.expected-instances=0",
				"Invalid limiter.failure.expected-instances = '0': must be positive (leave it unset to count the instances)");
	}

	@Test
	void aBadFailurePropertyFailsAtStartupOnTheLocalBackendToo() {
		// Checked before a shared backend first uses it: switching limiter.backend must not reveal it then.
		this.runner.withPropertyValues("limiter.backend=local", "limiter.failure.deadline=-1s")
			.run(context -> assertThat(context).hasFailed().getFailure().rootCause()
				.hasMessage("Invalid limiter.failure.deadline = '-1s': must be a positive duration"));
		this.runner.withPropertyValues("limiter.backend=local", "limiter.failure.expected-instances=-3")
			.run(context -> assertThat(context).hasFailed().getFailure().rootCause()
				.hasMessage("Invalid limiter.failure.expected-instances = '-3': must be positive (leave it unset to "
						+ "count the instances)"));
	}

	@Test
	void aDeadlineAboveTheMaxDeadlineFailsAtStartupNamingBoth() {
		this.runner.withBean(RedisConnectionFactory.class, () -> new LettuceConnectionFactory(
				new RedisStandaloneConfiguration("127.0.0.1", io.github.limiter.testsupport.RedisProcess.freePort())))
			.withPropertyValues("limiter.failure.deadline=2s", "limiter.failure.max-deadline=1s")
			.run(context -> assertThat(context).hasFailed().getFailure().rootCause().hasMessage(
					"Invalid limiter.failure.deadline = '2s': must not exceed limiter.failure.max-deadline = '1s' "
							+ "(the deadline adapts between the two)"));
	}

	private void assertStartupFailure(String property, String message) {
		this.runner.withBean(RedisConnectionFactory.class, () -> new LettuceConnectionFactory(
				new RedisStandaloneConfiguration("127.0.0.1", io.github.limiter.testsupport.RedisProcess.freePort())))
			.withPropertyValues(property)
			.run(context -> assertThat(context).hasFailed().getFailure().rootCause().hasMessage(message));
	}

	@Test
	void canBeSwitchedOff() {
		this.runner.withPropertyValues("limiter.enabled=false")
			.run(context -> assertThat(context).doesNotHaveBean(RateLimiter.class).doesNotHaveBean(RateLimitAdvisor.class));
	}

	@Test
	void theSwitchReadsWhatSpringBootReadsAsABooleanAndATypoFailsStartup() {
		for (String on : new String[] { "true", "on", "yes", "1", "TRUE" }) {
			this.runner.withPropertyValues("limiter.enabled=" + on)
				.run(context -> assertThat(context).as(on).hasSingleBean(RateLimiter.class).hasSingleBean(RateLimitAdvisor.class));
		}
		for (String off : new String[] { "off", "no", "0" }) {
			this.runner.withPropertyValues("limiter.enabled=" + off)
				.run(context -> assertThat(context).as(off).doesNotHaveBean(RateLimiter.class));
		}
		this.runner.withPropertyValues("limiter.enabled=ture")
			.run(context -> assertThat(context).hasFailed()
				.getFailure()
				.hasStackTraceContaining("Invalid limiter.enabled = 'ture': expected true or false"));
		this.runner.withPropertyValues("management.health.ratelimiter.enabled=maybe")
			.withConfiguration(org.springframework.boot.autoconfigure.AutoConfigurations.of(RateLimiterHealthAutoConfiguration.class))
			.run(context -> assertThat(context).hasFailed()
				.getFailure()
				.hasStackTraceContaining("Invalid management.health.ratelimiter.enabled = 'maybe': expected true or false"));
	}

	@Test
	void theAdviceRunsBeforeTransactionsByDefaultAndItsOrderIsConfigurable() {
		this.runner.run(context -> assertThat(context.getBean(RateLimitAdvisor.class).getOrder())
			.isLessThan(org.springframework.core.Ordered.LOWEST_PRECEDENCE));
		this.runner.withPropertyValues("limiter.aop.order=42")
			.run(context -> assertThat(context.getBean(RateLimitAdvisor.class).getOrder()).isEqualTo(42));
	}

	@Test
	void applicationsSharingARedisKeepTheirLimitsApartByName() {
		io.github.limiter.testsupport.RedisProcess redis = io.github.limiter.testsupport.TestRedis.standalone();
		String name = "shop-" + java.util.UUID.randomUUID();
		java.util.function.Supplier<RedisConnectionFactory> factory = () -> new LettuceConnectionFactory(
				new RedisStandaloneConfiguration("127.0.0.1", redis.port()));
		// A key that lives a whole window after each call: a fixed window's key expires at its window's end, which may
		// come between the call and the look for the key.
		io.github.limiter.Limit orders = io.github.limiter.algorithm.SlidingWindowLog.of("orders", 5,
				java.time.Duration.ofMinutes(1));
		this.runner.withBean(RedisConnectionFactory.class, factory)
			.withPropertyValues("spring.application.name=" + name, "limiter.failure.deadline=5s", "limiter.failure.max-deadline=5s")
			.run(context -> {
				io.github.limiter.Decision decision = context.getBean(RateLimiter.class).acquire(orders, "alice");
				assertThat(redis.command("KEYS", "limiter:" + name + ":*")).as("%s", decision).contains("alice");
			});
		String shared = "shared-" + java.util.UUID.randomUUID() + ":";
		this.runner.withBean(RedisConnectionFactory.class, factory)
			.withPropertyValues("spring.application.name=" + name, "limiter.key-prefix=" + shared,
					"limiter.failure.deadline=5s", "limiter.failure.max-deadline=5s")
			.run(context -> {
				io.github.limiter.Decision decision = context.getBean(RateLimiter.class).acquire(orders, "bob");
				assertThat(redis.command("KEYS", shared + "*")).as("an explicit prefix wins (%s)", decision).contains("bob");
			});
	}

	/** A backend of the application's own, admitting everything. */
	static class CustomBackend extends io.github.limiter.testsupport.StubBackend {

		CustomBackend() {
			super(requests -> CompletableFuture
				.completedFuture(Decision.of(requests.get(0).limit().name(), true, 1, 1, 0, 0, 0, 0, null)));
		}

	}

}
