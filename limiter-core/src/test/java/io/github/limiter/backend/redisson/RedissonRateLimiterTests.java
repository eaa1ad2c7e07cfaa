package io.github.limiter.backend.redisson;

import java.time.Duration;
import java.util.List;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.redisson.api.RKeys;
import org.redisson.api.RateLimiterConfig;
import org.redisson.api.RateType;
import org.redisson.api.RedissonClient;

import io.github.limiter.Decision;
import io.github.limiter.Limit;
import io.github.limiter.LimitRequest;
import io.github.limiter.RateLimiter;
import io.github.limiter.algorithm.SlidingWindowLog;
import io.github.limiter.algorithm.TokenBucket;
import io.github.limiter.testsupport.LoggedWarnings;
import io.github.limiter.testsupport.TestRedis;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Token buckets on Redisson's {@code RRateLimiter}, without the traps of using it directly (seed 004).
 */
class RedissonRateLimiterTests {

	private static RedissonClient redisson;

	private static RedissonClient otherInstance;

	private String prefix;

	@BeforeAll
	static void connect() {
		redisson = TestRedis.redisson();
		otherInstance = TestRedis.redisson();
	}

	@AfterAll
	static void disconnect() {
		redisson.shutdown();
		otherInstance.shutdown();
	}

	@BeforeEach
	void namespace() {
		this.prefix = TestRedis.uniquePrefix();
	}

	private RateLimiter limiter(RedissonClient client) {
		return RateLimiter.of(RedissonBackend.builder(client)
			.keyPrefix(this.prefix)
			.tokenBucketMode(RedissonBackend.TokenBucketMode.RATE_LIMITER)
			.build());
	}

	@Test
	void admitsUpToTheRateAndReportsRemainingPermits() {
		RateLimiter limiter = limiter(redisson);
		Limit limit = TokenBucket.of("rr", 3, Duration.ofMinutes(1));
		assertThat(limiter.acquire(limit, "k").remaining()).isEqualTo(2);
		assertThat(limiter.acquire(limit, "k", 2).remaining()).isZero();
		Decision rejected = limiter.acquire(limit, "k");
		assertThat(rejected.allowed()).isFalse();
		assertThat(rejected.retryAfter()).as("an upper bound: one interval").isEqualTo(Duration.ofMinutes(1));
		assertThat(limiter.check(limit, "k").allowed()).isFalse();
	}

	@Test
	void aRateChangedInConfigurationTakesEffectWithoutWipingTheState() {
		assertThat(limiter(redisson).acquire(TokenBucket.of("changed", 2, Duration.ofMinutes(1)), "k", 2).allowed()).isTrue();
		assertThat(limiter(redisson).acquire(TokenBucket.of("changed", 2, Duration.ofMinutes(1)), "k").allowed())
			.as("a restart with the same rate keeps the state").isFalse();

		// A restart with a higher rate: trySetRate alone would keep the old rate forever.
		RateLimiter restarted = limiter(redisson);
		Limit raised = TokenBucket.of("changed", 5, Duration.ofMinutes(1));
		Decision decision = restarted.acquire(raised, "k");
		assertThat(decision.allowed()).isTrue();
		assertThat(decision.remaining()).as("the two permits taken before still count").isEqualTo(2);
		RateLimiterConfig stored = redisson.getRateLimiter(this.prefix + "{" + tag("k") + "}rr:changed:k").getConfig();
		assertThat(stored.getRate()).isEqualTo(5);
		assertThat(stored.getRateInterval()).isEqualTo(60_000);
	}

	@Test
	void aLoweredRateHoldsForTheOwnBucketOfEveryInstance() {
		RateLimiter first = limiter(redisson);
		RateLimiter second = limiter(otherInstance);
		Limit five = TokenBucket.of("lowered", 5, Duration.ofMinutes(1)).withScope(Limit.Scope.PER_INSTANCE);
		Limit two = TokenBucket.of("lowered", 2, Duration.ofMinutes(1)).withScope(Limit.Scope.PER_INSTANCE);
		assertThat(first.acquire(five, "k").allowed()).isTrue();
		assertThat(second.acquire(five, "k").allowed()).isTrue();
		// Retuned to 2 a minute: each instance has taken one of its two. The first stores the new rate; the second
		// finds it stored, and its own count must still be taken over to it.
		assertThat(admitted(first, two, 10)).isEqualTo(1);
		assertThat(admitted(second, two, 10)).isEqualTo(1);
	}

	private static int admitted(RateLimiter limiter, Limit limit, int calls) {
		int admitted = 0;
		for (int i = 0; i < calls; i++) {
			admitted += limiter.acquire(limit, "k").allowed() ? 1 : 0;
		}
		return admitted;
	}

	@Test
	void bucketsOfIntervalsShorterThanARoundTripDecideEveryCall() throws InterruptedException {
		// 1 per 1 ms, 1 per 2 ms, 10 per 10 ms: keys kept alive one interval expired between a decision's three calls.
		RateLimiter limiter = limiter(redisson);
		for (TokenBucket bucket : List.of(TokenBucket.of("per-ms", 1, 1000, Duration.ofSeconds(1)),
				TokenBucket.of("per-2ms", 1, 500, Duration.ofSeconds(1)),
				TokenBucket.of("ten-per-10ms", 10, 1000, Duration.ofSeconds(1)))) {
			for (int i = 0; i < 20; i++) {
				assertThat(limiter.acquire(bucket, "k" + (i % 3)).allowed()).as("%s, call %d", bucket, i).isTrue();
				Thread.sleep(i % 2 * 30);
			}
		}
	}

	@Test
	void aRateRedissonStoresRoundedIsSaidOnceAndAWholeOneNever() {
		RateLimiter limiter = limiter(redisson);
		try (LoggedWarnings warnings = LoggedWarnings.of(RedissonBackend.class)) {
			// 800 per second: 1 per 1.25 ms, stored as 1 per 1 ms.
			Limit rounded = TokenBucket.of("rounded", 1, 800, Duration.ofSeconds(1));
			limiter.acquire(rounded, "a");
			limiter.acquire(rounded, "b");
			limiter.acquire(TokenBucket.of("whole", 5, 1000, Duration.ofSeconds(1)), "a");
			assertThat(warnings.messages()).filteredOn(message -> message.contains("stores"))
				.containsExactly("Redisson RRateLimiter of limit 'rounded' stores 1 permits per 1 ms, not per 1.25 ms as "
						+ "configured (125.0% of the configured rate): it counts its interval in whole milliseconds. "
						+ "Choose a capacity and rate whose interval, capacity / rate, is whole milliseconds, or the SCRIPT "
						+ "token bucket mode, which is exact. Said once per limit.");
		}
		assertThat(RedissonBackend.rateOf(TokenBucket.of("rounded", 1, 800, Duration.ofSeconds(1))).getRateInterval())
			.isEqualTo(1);
		assertThat(RedissonBackend.rateOf(TokenBucket.of("sub-ms-period", 10, 10, Duration.ofNanos(1_999_000)))
			.getRateInterval()).as("the period in nanoseconds, not truncated to 1 ms first").isEqualTo(2);
	}

	@Test
	void everyKeyExpires() {
		limiter(redisson).acquire(TokenBucket.of("expiring", 3, Duration.ofSeconds(30)), "k");
		RKeys keys = redisson.getKeys();
		Iterable<String> names = keys.getKeysByPattern(this.prefix + "*");
		int count = 0;
		for (String name : names) {
			count++;
			assertThat(keys.remainTimeToLive(name)).as("TTL of %s", name).isBetween(1L, 30_000L);
		}
		assertThat(count).isGreaterThanOrEqualTo(2);
	}

	@Test
	void overallIsSharedByInstancesAndPerInstanceIsNot() {
		Limit overall = TokenBucket.of("overall", 2, Duration.ofMinutes(1));
		assertThat(limiter(redisson).acquire(overall, "k", 2).allowed()).isTrue();
		assertThat(limiter(otherInstance).acquire(overall, "k").allowed()).isFalse();

		Limit perClient = TokenBucket.of("per-client", 2, Duration.ofMinutes(1)).withScope(Limit.Scope.PER_INSTANCE);
		assertThat(limiter(redisson).acquire(perClient, "k", 2).allowed()).isTrue();
		assertThat(limiter(redisson).acquire(perClient, "k").allowed()).isFalse();
		assertThat(limiter(otherInstance).acquire(perClient, "k", 2).allowed()).isTrue();
		assertThat(RedissonBackend.rateOf((TokenBucket) perClient).getRateType()).isEqualTo(RateType.PER_CLIENT);
	}

	@Test
	void aRejectingRateLimiterRefundsTheScriptedLimitsOfTheSameDecision() {
		RateLimiter limiter = limiter(redisson);
		// Exact and without boundaries: a fixed window would start afresh at a minute boundary of Redis's clock.
		Limit window = SlidingWindowLog.of("window", 5, Duration.ofMinutes(1));
		Limit bucket = TokenBucket.of("bucket", 1, Duration.ofMinutes(1));
		LimitRequest[] both = { LimitRequest.of(window, "k"), LimitRequest.of(bucket, "k") };
		assertThat(limiter.acquire(both).allowed()).isTrue();
		Decision second = limiter.acquire(both);
		assertThat(second.allowed()).isFalse();
		assertThat(second.limitName()).isEqualTo("bucket");
		assertThat(limiter.check(window, "k").remaining()).as("one consumed, the second refunded").isEqualTo(3);
	}

	@Test
	void aRefundLeavesTheRateLimitersPermitTakenRatherThanLetItReturnTwice() {
		// RRateLimiter.release would add the permit back while the acquire's own entry still returns it later.
		RateLimiter limiter = limiter(redisson);
		Limit bucket = TokenBucket.of("refunded", 2, Duration.ofMinutes(1));
		Decision first = limiter.acquire(bucket, "k");
		limiter.refund(List.of(LimitRequest.of(bucket, "k")), first);
		assertThat(limiter.acquire(bucket, "k").allowed()).isTrue();
		assertThat(limiter.acquire(bucket, "k").allowed()).as("2 per minute: the first permit is still taken").isFalse();
	}

	@Test
	void aRejectingScriptedLimitLeavesTheRateLimiterUntouched() {
		RateLimiter limiter = limiter(redisson);
		// Without boundaries: a fixed window would start afresh at a minute boundary of Redis's clock.
		Limit window = SlidingWindowLog.of("window", 1, Duration.ofMinutes(1));
		Limit bucket = TokenBucket.of("bucket", 3, Duration.ofMinutes(1));
		LimitRequest[] both = { LimitRequest.of(window, "k"), LimitRequest.of(bucket, "k") };
		assertThat(limiter.acquire(both).allowed()).isTrue();
		assertThat(limiter.acquire(both).allowed()).isFalse();
		assertThat(limiter.check(bucket, "k").remaining()).as("one taken, one more would leave one").isEqualTo(1);
	}

	@Test
	void afterAnyMixOfAcquireCheckAndRecordEveryKeyExpires() throws InterruptedException {
		RateLimiter limiter = limiter(redisson);
		Limit limit = TokenBucket.of("mixed", 3, Duration.ofSeconds(1));
		limiter.acquire(limit, "used");
		limiter.record(limit, "used");
		Thread.sleep(1100);
		// Permits came back: availablePermits writes the count again; and on fresh keys it writes a first count.
		limiter.check(limit, "used");
		for (int i = 0; i < 20; i++) {
			limiter.check(limit, "fresh-" + i);
		}
		RKeys keys = redisson.getKeys();
		int count = 0;
		for (String name : keys.getKeysByPattern(this.prefix + "*")) {
			count++;
			assertThat(keys.remainTimeToLive(name)).as("TTL of %s", name).isBetween(1L, 1_000L);
		}
		assertThat(count).as("the 21 limiters' keys").isGreaterThanOrEqualTo(21);
	}

	@Test
	void aCheckLeavesNoStaleCountBehindAnIdlePeriod() throws InterruptedException {
		RateLimiter limiter = limiter(redisson);
		Limit limit = TokenBucket.of("stale", 10, Duration.ofSeconds(2));
		assertThat(limiter.acquire(limit, "k", 5).allowed()).isTrue();
		Thread.sleep(1_000);
		assertThat(limiter.acquire(limit, "k", 5).allowed()).isTrue();
		Thread.sleep(1_100);
		// The first five came back: the check writes a count of 5, which Redisson leaves without a TTL.
		assertThat(limiter.check(limit, "k").allowed()).isTrue();
		Thread.sleep(2_500);
		int admitted = 0;
		for (int i = 0; i < 11; i++) {
			admitted += limiter.acquire(limit, "k").allowed() ? 1 : 0;
		}
		assertThat(admitted).as("a full bucket after the keep-alive, not the count the check left").isEqualTo(10);
	}

	@Test
	void aLimiterThatExpiredWhileIdleIsSetUpAgain() throws InterruptedException {
		RateLimiter limiter = limiter(redisson);
		Limit limit = TokenBucket.of("idle", 2, Duration.ofSeconds(1));
		assertThat(limiter.acquire(limit, "k").allowed()).isTrue();
		Thread.sleep(1500);
		assertThat(limiter.acquire(limit, "k").allowed()).isTrue();
	}

	@Test
	void aBucketWithAWarmupGoesThroughTheScriptWhichKnowsWarmingUp() {
		RateLimiter limiter = limiter(redisson);
		Limit limit = TokenBucket.builder("warm").capacity(1).refill(10, Duration.ofSeconds(1))
			.warmup(Duration.ofSeconds(4)).build();
		assertThat(limiter.acquire(limit, "k").allowed()).isTrue();
		// Cold: the next permit is 295 ms away, where an RRateLimiter of 1 per 100 ms would say 100 ms at most.
		Decision rejected = limiter.acquire(limit, "k");
		assertThat(rejected.allowed()).isFalse();
		assertThat(rejected.retryAfter()).isGreaterThan(Duration.ofMillis(200));
		java.util.List<String> names = new java.util.ArrayList<>();
		redisson.getKeys().getKeysByPattern(this.prefix + "*").forEach(names::add);
		assertThat(names).as("one GCRA key, no RRateLimiter").singleElement().matches(key -> key.contains("}gc:warm:"));
	}

	@Test
	void resetDeletesTheRateLimiter() {
		RateLimiter limiter = limiter(redisson);
		Limit limit = TokenBucket.of("reset", 1, Duration.ofMinutes(1));
		assertThat(limiter.acquire(limit, "k").allowed()).isTrue();
		limiter.reset(limit, "k");
		assertThat(limiter.acquire(limit, "k").allowed()).isTrue();
	}

	private String tag(String key) {
		String full = new io.github.limiter.backend.redis.KeyLayout("").key(
				LimitRequest.of(TokenBucket.of("x", 1, Duration.ofSeconds(1)), key));
		return full.substring(1, full.indexOf('}'));
	}

}
