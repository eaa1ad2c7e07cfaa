package io.github.limiter.guard;

import java.time.Duration;
import java.util.List;

import org.junit.jupiter.api.Test;

import io.github.limiter.Decision;
import io.github.limiter.Limit;
import io.github.limiter.LimitRequest;
import io.github.limiter.Operation;
import io.github.limiter.algorithm.FixedWindow;
import io.github.limiter.spi.BackendException;
import io.github.limiter.spi.RateLimiterBackend;
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
		Limit perInstance = FixedWindow.builder("mine").limit(2).window(Duration.ofMinutes(1))
			.scope(Limit.Scope.PER_INSTANCE).build();
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

	private static Decision decide(GuardedBackend guard, Limit limit, String key) {
		return guard.decideAsync(List.of(LimitRequest.of(limit, key)), Operation.ACQUIRE).toCompletableFuture().join();
	}

}
