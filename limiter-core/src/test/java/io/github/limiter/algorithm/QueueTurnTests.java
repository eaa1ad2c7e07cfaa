package io.github.limiter.algorithm;

import java.time.Duration;

import org.junit.jupiter.api.Test;

import io.github.limiter.Decision;
import io.github.limiter.Limit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Whether waiting can admit a call that a queueing bucket refused under a bound on its delay, read from the refusal's
 * reset-after (how far the end of the queue lies, rounded up to a microsecond): never when its turn lies beyond the
 * bound, and when the rounding leaves it in doubt, yes (one more ask, never a call given up that could pass).
 */
class QueueTurnTests {

	/**
	 * 3 permits per 10 µs: a permit takes 10 ticks of a third of a microsecond; one permit beyond the rate is served
	 * at once (10 ticks free), so a call's turn is the end of the queue less 10 ticks.
	 */
	private final Limit bounded = LeakyBucket.twoStage("fine", 3, Duration.ofNanos(10_000), 5, 1)
		.withMaxDelay(Duration.ofNanos(5_000));

	private static Decision refusedWithQueueEndingIn(long resetAfterMicros) {
		return Decision.of("fine", false, 6, 0, 1, resetAfterMicros, 0, 0, null);
	}

	@Test
	void aTurnBeyondTheBoundIsNotWaitedFor() {
		// 10 µs: the queue ends 28 to 30 ticks away, the turn 18 to 20, past the bound of 15.
		assertThat(this.bounded.admitsAfterWaiting(refusedWithQueueEndingIn(10))).isFalse();
		assertThat(this.bounded.admitsAfterWaiting(refusedWithQueueEndingIn(20))).isFalse();
	}

	@Test
	void aTurnWithinTheBoundOrInDoubtIsWaitedFor() {
		// 9 µs: the queue ends 25 to 27 ticks away, the turn 15 to 17, the bound 15: in doubt, so waited for.
		assertThat(this.bounded.admitsAfterWaiting(refusedWithQueueEndingIn(9))).isTrue();
		assertThat(this.bounded.admitsAfterWaiting(refusedWithQueueEndingIn(5))).isTrue();
	}

	@Test
	void aBucketWithoutABoundIsAlwaysWaitedFor() {
		Limit unbounded = LeakyBucket.twoStage("fine", 3, Duration.ofNanos(10_000), 5, 1);
		assertThat(unbounded.admitsAfterWaiting(refusedWithQueueEndingIn(20))).isTrue();
	}

}
