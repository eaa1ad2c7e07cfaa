package io.github.limiter.testsupport;

import java.time.Duration;
import java.time.Instant;

import io.github.limiter.TimeSource;

/**
 * A clock the test moves by hand, in microseconds.
 */
public final class ManualClock implements TimeSource {

	private volatile long micros;

	/**
	 * A clock at an instant.
	 * @param instant the instant
	 */
	public ManualClock(Instant instant) {
		set(instant);
	}

	@Override
	public long nowMicros() {
		return this.micros;
	}

	/**
	 * Moves to an instant.
	 * @param instant the instant
	 */
	public void set(Instant instant) {
		this.micros = instant.getEpochSecond() * 1_000_000L + instant.getNano() / 1000;
	}

	/**
	 * Moves forward.
	 * @param duration how far
	 */
	public void advance(Duration duration) {
		this.micros += duration.toNanos() / 1000;
	}

	/**
	 * Moves forward by microseconds.
	 * @param micros how far
	 */
	public void advanceMicros(long micros) {
		this.micros += micros;
	}

}
