package io.github.limiter.algorithm;

/**
 * The generic cell rate algorithm, shared by {@link TokenBucket} and {@link LeakyBucket}: one number of state, the
 * theoretical arrival time (TAT) of the next permit if the bucket were drained at its rate.
 *
 * <p>With an emission interval {@code T} (time per permit) and a capacity {@code C}, a call of cost {@code c} at
 * {@code now} is admitted when {@code max(tat, now) + c·T − now ≤ C·T}; the bucket then holds
 * {@code (C·T − (tat − now)) / T} permits. Times are microseconds as doubles, so refill is exact far below a
 * millisecond. Script: {@code gcra.lua}, with the same arithmetic in the same order.
 */
final class Gcra {

	/** Tolerance for the admission comparison, in microseconds, so that c·T sums do not lose a permit to rounding. */
	static final double EPSILON = 1e-3;

	private final double interval;

	private final long capacity;

	private final double tolerance;

	Gcra(double interval, long capacity) {
		this.interval = interval;
		this.capacity = capacity;
		this.tolerance = capacity * interval;
	}

	static Gcra of(long periodMicros, long permits, long capacity) {
		double interval = (double) periodMicros / permits;
		if (interval < 0.001) {
			throw new IllegalArgumentException("rate of " + permits + " per " + periodMicros
					+ "us is above one permit per nanosecond, which cannot be enforced");
		}
		if (capacity * interval > AbstractLimit.MAX_DURATION.toSeconds() * 1e6) {
			throw new IllegalArgumentException("capacity " + capacity + " at one permit every " + interval
					+ "us takes longer than " + AbstractLimit.MAX_DURATION.toDays() + " days to drain");
		}
		return new Gcra(interval, capacity);
	}

	double interval() {
		return this.interval;
	}

	double tolerance() {
		return this.tolerance;
	}

	Outcome<Double> evaluate(Double tat, long now, long cost, boolean queue) {
		return evaluate(tat, now, cost, queue, -1);
	}

	/**
	 * Decides a call.
	 * @param maxAhead longest queueing delay the call accepts in microseconds ({@code ahead}, the time until its
	 * turn), or a negative number for the bucket's own bound: a call admitted within it waits at most this long
	 */
	Outcome<Double> evaluate(Double tat, long now, long cost, boolean queue, double maxAhead) {
		// Compared as durations from now, which are small enough to be exact where absolute times are not: a call of
		// the whole capacity on a fresh key waits exactly the tolerance, and is admitted.
		double ahead = (tat == null) ? 0 : Math.max(tat - now, 0);
		double wait = ahead + cost * this.interval;
		// A bound on the delay is a smaller tolerance for this call: admitted when ahead <= maxAhead.
		double tolerance = (maxAhead < 0) ? this.tolerance : Math.min(this.tolerance, maxAhead + cost * this.interval);
		double perPermit = (maxAhead < 0) ? this.tolerance : Math.min(this.tolerance, maxAhead + this.interval);
		boolean allowed = wait - tolerance <= EPSILON;
		double aheadAfter = allowed ? wait : ahead;
		long remaining = (long) Math.floor((perPermit - aheadAfter) / this.interval + 1e-9);
		long retryAfter = allowed ? 0 : Math.max(1, AbstractLimit.ceil(wait - tolerance));
		long resetAfter = AbstractLimit.ceil(aheadAfter);
		long delay = (queue && allowed) ? AbstractLimit.ceil(ahead) : 0;
		return new Outcome<>(allowed, Math.max(0, Math.min(this.capacity, remaining)), retryAfter, resetAfter, delay,
				allowed ? Double.valueOf(now + wait) : tat);
	}

	double record(Double tat, long now, long cost) {
		double start = (tat == null) ? now : Math.max(tat, now);
		return Math.min(start + cost * this.interval, now + this.tolerance);
	}

}
