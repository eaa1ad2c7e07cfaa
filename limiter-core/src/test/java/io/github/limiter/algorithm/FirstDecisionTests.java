package io.github.limiter.algorithm;

import java.time.Duration;
import java.time.ZoneOffset;
import java.util.List;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A key that was never used (no state) and a call that does not fit: every algorithm rejects it, says when to
 * retry, and leaves the key as it was. The local fallback of the guard asks this of limits divided among instances,
 * and rounding can make a call of the whole capacity miss by a fraction of a microsecond.
 */
class FirstDecisionTests {

	private static final long NOW = 1_781_517_600_000_000L;

	static List<AbstractLimit<?>> limits() {
		return List.of(FixedWindow.of("fixed", 2, Duration.ofSeconds(1)),
				FixedWindow.builder("day").limit(2).calendar(CalendarUnit.DAY, ZoneOffset.UTC).build(),
				SlidingWindowLog.of("log", 2, Duration.ofSeconds(1)),
				SlidingWindowCounter.of("counter", 2, Duration.ofSeconds(1)),
				TokenBucket.of("token", 2, 7, Duration.ofSeconds(1)),
				LeakyBucket.queueing("queueing", 7, Duration.ofSeconds(1), 1),
				LeakyBucket.nodelay("nodelay", 7, Duration.ofSeconds(1), 1));
	}

	@ParameterizedTest
	@MethodSource("limits")
	<S> void aFirstCallAboveTheCapacityIsRejectedAndLeavesNoState(AbstractLimit<S> limit) {
		Outcome<S> outcome = limit.evaluate(null, NOW, limit.capacity() + 1);
		assertThat(outcome.allowed()).isFalse();
		assertThat(outcome.next()).as("state after a rejected first call").isNull();
		assertThat(outcome.retryAfterMicros()).isNotNegative();
		assertThat(outcome.remaining()).isBetween(0L, limit.capacity());
	}

	@org.junit.jupiter.api.Test
	void theWholeCapacityFitsAFreshKeyAtRatesThatAreNotWholeMicroseconds() {
		for (long permits = 1; permits <= 60; permits++) {
			for (int instances = 1; instances <= 4; instances++) {
				for (long capacity : new long[] { 1, 2, 3, 7, 100 }) {
					TokenBucket limit = TokenBucket.of("t", capacity, permits, Duration.ofSeconds(1)).dividedBy(instances);
					for (long now = NOW; now < NOW + 50; now += 7) {
						assertThat(limit.evaluate(null, now, limit.capacity()).allowed())
							.as("%s at %d", limit, now).isTrue();
					}
				}
			}
		}
	}

	@ParameterizedTest
	@MethodSource("limits")
	<S> void aFirstCallOfTheWholeCapacityIsAdmitted(AbstractLimit<S> limit) {
		Outcome<S> outcome = limit.evaluate(null, NOW, limit.capacity());
		assertThat(outcome.allowed()).as("a call of the whole capacity %s on a fresh key", limit).isTrue();
		assertThat(outcome.remaining()).isZero();
		assertThat(outcome.next()).isNotNull();
	}

}
