package io.github.limiter;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import io.github.limiter.algorithm.SlidingWindowLog;
import io.github.limiter.algorithm.TokenBucket;
import io.github.limiter.backend.redis.spring.SpringDataRedisScriptExecutor;
import io.github.limiter.guard.GuardedBackend;
import io.github.limiter.spi.RateLimiterBackend;
import io.github.limiter.testsupport.TestRedis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * The README's core snippet, as a new user writes it, on a real Redis: a started factory, a backend without an
 * executor, the guard around it, a token bucket with named settings, blocking and asynchronous decisions.
 */
class CoreApiTests {

	@Test
	void theReadmeSnippetRunsAsWritten() throws Exception {
		LettuceConnectionFactory redis = new LettuceConnectionFactory(
				new RedisStandaloneConfiguration("127.0.0.1", TestRedis.standalone().port()));
		redis.afterPropertiesSet();
		redis.start();
		RateLimiterBackend shared = SpringDataRedisScriptExecutor.backend(redis).keyPrefix(TestRedis.uniquePrefix()).build();
		GuardedBackend guarded = GuardedBackend.builder(shared).heartbeat(Duration.ofSeconds(1)).build();
		try {
			RateLimiter limiter = RateLimiter.of(guarded);
			// A cold JVM's first decisions may miss the deadline on a loaded machine and be refused as undecided
			// (README, "When Redis is down, slow or frozen"): the numbers below are Redis's, once it has answered.
			long giveUp = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
			while ((guarded.stats().lastProbe() == null || guarded.stats().lastProbe().failure() != null)
					&& System.nanoTime() < giveUp) {
				Thread.sleep(20);
			}
			Limit perUser = TokenBucket.builder("api").capacity(10).refill(1, Duration.ofSeconds(1)).build();
			assertThat(perUser).isEqualTo(TokenBucket.of("api", 10, 1, Duration.ofSeconds(1)));

			Decision first = limiter.acquireAsync(perUser, "user-1").toCompletableFuture().get(10, TimeUnit.SECONDS);
			assertThat(first.allowed()).as("%s", first).isTrue();
			assertThat(first.remaining()).isEqualTo(9);
			assertThat(limiter.acquireAsync(perUser, "user-1", 9).toCompletableFuture().get(10, TimeUnit.SECONDS).remaining())
				.isZero();
			Decision rejected = limiter.acquire(perUser, "user-1");
			assertThat(rejected.allowed()).isFalse();
			assertThat(rejected.retryAfter()).isPositive().isLessThanOrEqualTo(Duration.ofSeconds(1));

			Limit failures = SlidingWindowLog.of("login-failures", 3, Duration.ofMinutes(1));
			for (int i = 0; i < 3; i++) {
				assertThat(limiter.check(failures, "alice").allowed()).isTrue();
				limiter.record(failures, "alice");
			}
			assertThat(limiter.check(failures, "alice").allowed()).as("the fourth failure asks for a captcha").isFalse();
			assertThat(limiter.decide(List.of(LimitRequest.of(perUser, "user-2")), Operation.ACQUIRE).origin())
				.isEqualTo(Decision.Origin.BACKEND);
		}
		finally {
			guarded.close();
			redis.destroy();
		}
	}

	@Test
	void aTokenBucketBuilderNamesItsSettingsAndRefusesAMissingRefill() {
		assertThat(TokenBucket.builder("b").refill(5, Duration.ofSeconds(1)).build().capacity())
			.as("the capacity defaults to one refill").isEqualTo(5);
		assertThat(TokenBucket.builder("b").capacity(20).refill(5, Duration.ofSeconds(1)).build())
			.isEqualTo(TokenBucket.of("b", 20, 5, Duration.ofSeconds(1)));
		assertThatIllegalArgumentException().isThrownBy(() -> TokenBucket.builder("b").capacity(20).build())
			.withMessage("refill of token bucket 'b' must be set");
	}

}
