package io.github.limiter.guard;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * How long a decision may wait for the backend: {@value #MULTIPLIER} times the slowest answer of the last
 * {@value #SECONDS} seconds, never less than a floor nor more than a ceiling.
 *
 * <p>Answers are timed from the caller's side, so they include what this JVM adds (a busy event loop, a garbage
 * collection, a lane queue). That is the point: when the JVM is busy every answer comes later, and the deadline
 * follows, instead of taking a busy JVM for a dead backend. A backend that stops answering records nothing, so the
 * deadline stays where the last answers put it.
 *
 * <p>The slowest answer is kept per second in a ring of {@value #SECONDS} slots: recording is one read, and a
 * compare-and-set only when an answer is the slowest of its second.
 */
final class AdaptiveDeadline {

	static final int MULTIPLIER = 3;

	static final int SECONDS = 10;

	private static final long SECOND = 1_000_000_000L;

	private final long floorNanos;

	private final long ceilingNanos;

	/** Slot i holds the slowest answer of the second {@code seconds[i]}. */
	private final AtomicLongArray slowest = new AtomicLongArray(SECONDS);

	private final AtomicLongArray seconds = new AtomicLongArray(SECONDS);

	AdaptiveDeadline(Duration floor, Duration ceiling) {
		this.floorNanos = floor.toNanos();
		this.ceilingNanos = Math.max(this.floorNanos, ceiling.toNanos());
		for (int i = 0; i < SECONDS; i++) {
			this.seconds.set(i, Long.MIN_VALUE);
		}
	}

	/**
	 * Records how long an answer took.
	 * @param latencyNanos from the call to the answer
	 * @param nowNanos the monotonic time of the answer
	 */
	void record(long latencyNanos, long nowNanos) {
		long second = Math.floorDiv(nowNanos, SECOND);
		int slot = (int) Math.floorMod(second, (long) SECONDS);
		if (this.seconds.get(slot) != second) {
			// A new second in this slot; two recorders racing here may lose one value, which only makes the estimate
			// briefly lower, never wrong for long.
			this.seconds.set(slot, second);
			this.slowest.set(slot, latencyNanos);
			return;
		}
		long current;
		while (latencyNanos > (current = this.slowest.get(slot))) {
			if (this.slowest.compareAndSet(slot, current, latencyNanos)) {
				return;
			}
		}
	}

	/**
	 * The deadline now.
	 * @param nowNanos the monotonic time
	 * @return the deadline in nanoseconds, between the floor and the ceiling
	 */
	long nanos(long nowNanos) {
		long second = Math.floorDiv(nowNanos, SECOND);
		long slowest = 0;
		for (int i = 0; i < SECONDS; i++) {
			if (second - this.seconds.get(i) < SECONDS) {
				slowest = Math.max(slowest, this.slowest.get(i));
			}
		}
		long wanted = (slowest > this.ceilingNanos / MULTIPLIER) ? this.ceilingNanos : slowest * MULTIPLIER;
		return Math.max(this.floorNanos, Math.min(this.ceilingNanos, wanted));
	}

	Duration floor() {
		return Duration.ofNanos(this.floorNanos);
	}

	Duration ceiling() {
		return Duration.ofNanos(this.ceilingNanos);
	}

}
