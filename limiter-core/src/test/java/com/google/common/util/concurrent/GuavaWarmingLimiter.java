package com.google.common.util.concurrent;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * Guava's warming {@link RateLimiter} ({@code RateLimiter.create(rate, warmup)}) on a clock the test sets: the
 * reference the warm-up of our token bucket is checked against. Lives in Guava's package for its package-private
 * factory that takes a stopwatch.
 */
public final class GuavaWarmingLimiter {

	private final Clock clock = new Clock();

	private final RateLimiter limiter;

	/**
	 * Guava's warming limiter, created at time 0 of its clock.
	 * @param permitsPerSecond the stable rate
	 * @param warmup the warm-up period
	 */
	public GuavaWarmingLimiter(double permitsPerSecond, Duration warmup) {
		this.limiter = RateLimiter.create(permitsPerSecond, warmup.toNanos() / 1000, TimeUnit.MICROSECONDS, 3.0,
				this.clock);
	}

	/**
	 * {@code tryAcquire()} at a time.
	 * @param micros microseconds since the limiter was created
	 * @return whether Guava admits the call
	 */
	public boolean tryAcquireAt(long micros) {
		this.clock.micros = micros;
		return this.limiter.tryAcquire();
	}

	private static final class Clock extends RateLimiter.SleepingStopwatch {

		private long micros;

		@Override
		protected long readMicros() {
			return this.micros;
		}

		@Override
		protected void sleepMicrosUninterruptibly(long micros) {
			if (micros > 0) {
				throw new IllegalStateException("tryAcquire() without a timeout never waits, but slept " + micros + "us");
			}
		}

	}

}
