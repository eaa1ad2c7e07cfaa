package io.github.limiter.guard;

import java.time.Duration;
import java.util.List;

import org.junit.jupiter.api.Test;

import io.github.limiter.Decision;
import io.github.limiter.Limit;
import io.github.limiter.LimitRequest;
import io.github.limiter.Operation;
import io.github.limiter.algorithm.FixedWindow;
import io.github.limiter.algorithm.SlidingWindowLog;
import io.github.limiter.algorithm.TokenBucket;
import io.github.limiter.spi.BackendException;
import io.github.limiter.spi.RateLimiterBackend;
import io.github.limiter.testsupport.LoggedWarnings;
import io.github.limiter.testsupport.StubBackend;

import static org.assertj.core.api.Assertions.assertThat;

/** What the local policy decides while the circuit is open, on a backend that refuses every call. */
class LocalShareTests {

	/** A backend that is down: every call fails at once. */
	private static final RateLimiterBackend DOWN = StubBackend.failingWith(new BackendException("down", null));

	/**
	 * A limit per instance is this instance's own, not a share of one: 2 a minute on each of 3 instances stays 2 a
	 * minute here while Redis is away (a shared limit of 2 among 3 instances would have no share at all).
	 */
	@Test
	void aLimitPerInstanceIsNotDividedAmongTheInstances() throws Exception {
		// Without boundaries: the local share decides on the real clock, where a fixed window starts afresh each minute.
		Limit perInstance = SlidingWindowLog.of("mine", 2, Duration.ofMinutes(1)).withScope(Limit.Scope.PER_INSTANCE);
		try (GuardedBackend guard = GuardedBackend.builder(DOWN)
			.deadline(Duration.ofMillis(50))
			.maxDeadline(Duration.ofMillis(100))
			.openDuration(Duration.ofSeconds(10))
			.expectedInstances(3)
			.build()) {
			long end = System.nanoTime() + Duration.ofSeconds(10).toNanos();
			while (guard.breaker().state() != CircuitBreaker.State.OPEN && System.nanoTime() < end) {
				decide(guard, perInstance, "warm");
				Thread.sleep(5);
			}
			assertThat(guard.breaker().state()).isEqualTo(CircuitBreaker.State.OPEN);
			Decision first = decide(guard, perInstance, "k");
			assertThat(first.origin()).isEqualTo(Decision.Origin.LOCAL_FALLBACK);
			assertThat(first.allowed()).isTrue();
			assertThat(decide(guard, perInstance, "k").allowed()).isTrue();
			assertThat(decide(guard, perInstance, "k").allowed()).as("its own 2 a minute").isFalse();
		}
	}

	/**
	 * A call that costs more than this instance's share is rejected: charged only the share's capacity, four instances
	 * would admit 20 permits of a limit of 10 in each window (the review's 4 calls of 5 on a share of 2).
	 */
	@Test
	void aCallCostingMoreThanTheShareIsRejected() throws Exception {
		Limit tenPerSecond = FixedWindow.of("ten", 10, Duration.ofSeconds(1));
		try (GuardedBackend guard = opened(4); LoggedWarnings logged = LoggedWarnings.of(GuardedBackend.class)) {
			Decision five = guard.decideAsync(List.of(new LimitRequest(tenPerSecond, "k", 5)), Operation.ACQUIRE)
				.toCompletableFuture()
				.join();
			assertThat(five.origin()).isEqualTo(Decision.Origin.LOCAL_FALLBACK);
			assertThat(five.allowed()).as("5 permits on a share of 2").isFalse();
			assertThat(logged.messages()).anySatisfy(message -> assertThat(message)
				.startsWith("Rate limit 'ten': a call of cost 5 is more than this instance's local share holds (2 of 10,"
						+ " shared among 4 instances)"));
			Decision two = guard.decideAsync(List.of(new LimitRequest(tenPerSecond, "k", 2)), Operation.ACQUIRE)
				.toCompletableFuture()
				.join();
			assertThat(two.allowed()).as("the share's own 2").isTrue();
		}
	}

	/**
	 * A bucket whose share cannot be a limit (one a year among 11 instances refills once in eleven years, beyond the
	 * longest period a limit may have) rejects during the outage instead of throwing on every call.
	 */
	@Test
	void aBucketWithNoShareThatCanBeBuiltIsRejectedNotThrown() throws Exception {
		Limit yearly = TokenBucket.of("per-year", 1, Duration.ofDays(365));
		try (GuardedBackend guard = opened(11)) {
			Decision decision = decide(guard, yearly, "alice");
			assertThat(decision.origin()).isEqualTo(Decision.Origin.LOCAL_FALLBACK);
			assertThat(decision.allowed()).isFalse();
			assertThat(decision.retryAfter()).as("at the next probe").isLessThanOrEqualTo(Duration.ofSeconds(10));
		}
	}

	/** A guard whose circuit is open, sharing among the given instances. */
	private static GuardedBackend opened(int instances) throws InterruptedException {
		GuardedBackend guard = GuardedBackend.builder(DOWN)
			.deadline(Duration.ofMillis(50))
			.maxDeadline(Duration.ofMillis(100))
			.openDuration(Duration.ofSeconds(10))
			.expectedInstances(instances)
			.build();
		Limit warm = FixedWindow.of("warm", 100, Duration.ofMinutes(1));
		long end = System.nanoTime() + Duration.ofSeconds(10).toNanos();
		while (guard.breaker().state() != CircuitBreaker.State.OPEN && System.nanoTime() < end) {
			decide(guard, warm, "warm");
			Thread.sleep(5);
		}
		assertThat(guard.breaker().state()).isEqualTo(CircuitBreaker.State.OPEN);
		return guard;
	}

	private static Decision decide(GuardedBackend guard, Limit limit, String key) {
		return guard.decideAsync(List.of(LimitRequest.of(limit, key)), Operation.ACQUIRE).toCompletableFuture().join();
	}

}
