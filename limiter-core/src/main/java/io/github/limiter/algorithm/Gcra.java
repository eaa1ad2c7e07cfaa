package io.github.limiter.algorithm;

/**
 * The generic cell rate algorithm, shared by {@link TokenBucket} and {@link LeakyBucket}: one value of state, the
 * theoretical arrival time (TAT) of the next permit if the bucket were drained at its rate.
 *
 * <p>With an emission interval {@code T} (time per permit) and a capacity {@code C}, a call of cost {@code c} at
 * {@code now} is admitted when {@code ahead + c·T ≤ C·T}, {@code ahead} being {@code max(tat − now, 0)}; the bucket
 * then holds {@code (C·T − ahead) / T} permits.
 *
 * <p><b>Exact arithmetic.</b> A rate of {@code n} permits per {@code p} microseconds is held as integers: time is
 * counted in ticks of {@code 1/q} microsecond, {@code q = n / gcd(p, n)}, so that a permit takes exactly
 * {@code T = p / gcd(p, n)} ticks, and nothing is ever rounded: a capacity of 1,000 at 1.1 µs per permit admits
 * 1,000, and 10 million per second is 10 permits per microsecond, not a time that does not move. Every quantity the
 * algorithm computes is at most {@code C·T} ticks, which must stay within 2<sup>53</sup>, the integers that the
 * doubles of Redis Lua hold exactly; a bucket beyond that is refused when it is built. Script: {@code gcra.lua}, with
 * the same integers in the same order.
 */
final class Gcra {

	/** Largest number of ticks the arithmetic may reach: the doubles of Redis Lua hold every integer up to it. */
	static final long MAX_TICKS = 1L << 53;

	/** Ticks per permit. */
	private final long interval;

	/** Ticks per microsecond. */
	private final long q;

	private final long capacity;

	/** Ticks of a full bucket: capacity × interval. */
	private final long tolerance;

	private Gcra(long interval, long q, long capacity) {
		this.interval = interval;
		this.q = q;
		this.capacity = capacity;
		this.tolerance = capacity * interval;
	}

	static Gcra of(long periodMicros, long permits, long capacity) {
		long gcd = gcd(periodMicros, permits);
		long q = permits / gcd;
		long interval = periodMicros / gcd;
		if (q > 1000 * interval) {
			throw new IllegalArgumentException("rate of " + permits + " per " + periodMicros
					+ "us is above one permit per nanosecond, which cannot be enforced");
		}
		if (capacity * ((double) interval / q) > AbstractLimit.MAX_DURATION.toSeconds() * 1e6) {
			throw new IllegalArgumentException("capacity " + capacity + " at " + permits + " per " + periodMicros
					+ "us takes longer than " + AbstractLimit.MAX_DURATION.toDays() + " days to drain");
		}
		if (capacity > MAX_TICKS / interval) {
			throw new IllegalArgumentException("capacity " + capacity + " at " + permits + " per " + periodMicros
					+ "us cannot be held exactly: a full bucket is " + capacity + " x " + interval + " steps of 1/" + q
					+ " us, above 2^53; use a smaller capacity, or a rate whose permits divide the period in whole"
					+ " microseconds more evenly");
		}
		return new Gcra(interval, q, capacity);
	}

	private static long gcd(long a, long b) {
		while (b != 0) {
			long r = a % b;
			a = b;
			b = r;
		}
		return a;
	}

	/** Ticks per permit. */
	long interval() {
		return this.interval;
	}

	/** Ticks per microsecond. */
	long ticksPerMicro() {
		return this.q;
	}

	/** How long a full bucket takes to drain, in whole microseconds (rounded up). */
	long toleranceMicros() {
		return ceilDiv(this.tolerance, this.q);
	}

	Outcome<GcraState> evaluate(GcraState tat, long now, long cost) {
		return evaluate(tat, now, cost, this.capacity, -1);
	}

	/**
	 * Decides a call.
	 * @param delayFree permits in excess of the rate served without a delay (nginx {@code delay}): an admitted call
	 * with more than these ahead of it waits for the rest to drain; the capacity for none (a token bucket, nginx
	 * {@code nodelay}), 0 for a pure queue
	 * @param maxDelayMicros longest delay the call accepts: a call whose delay would be longer is rejected; negative
	 * for the bucket's own bound
	 */
	Outcome<GcraState> evaluate(GcraState tat, long now, long cost, long delayFree, long maxDelayMicros) {
		long ahead = ahead(tat, now);
		long wait = ahead + cost * this.interval;
		long free = Math.min(delayFree, this.capacity) * this.interval;
		long limit = this.tolerance;
		long perPermit = this.tolerance;
		if (maxDelayMicros >= 0) {
			// A bound on the delay is a smaller tolerance for this call: admitted when its delay is within the bound.
			long bound = Math.min(maxDelayMicros, toleranceMicros()) * this.q + free;
			limit = Math.min(this.tolerance, bound + cost * this.interval);
			perPermit = Math.min(this.tolerance, bound + this.interval);
		}
		boolean allowed = wait <= limit;
		long aheadAfter = allowed ? wait : ahead;
		long remaining = (perPermit > aheadAfter) ? Math.min(this.capacity, (perPermit - aheadAfter) / this.interval) : 0;
		long retryAfter = allowed ? 0 : Math.max(1, ceilDiv(wait - limit, this.q));
		long resetAfter = ceilDiv(aheadAfter, this.q);
		long delay = (allowed && ahead > free) ? ceilDiv(ahead - free, this.q) : 0;
		return new Outcome<>(allowed, remaining, retryAfter, resetAfter, delay, allowed ? at(now, aheadAfter) : tat);
	}

	GcraState record(GcraState tat, long now, long cost) {
		return at(now, Math.min(ahead(tat, now) + cost * this.interval, this.tolerance));
	}

	long expiresAtMicros(GcraState tat) {
		return tat.micros() + ((tat.ticks() > 0) ? 1 : 0);
	}

	/** Ticks from now to the theoretical arrival time, never more than a full bucket (a clock that went back). */
	private long ahead(GcraState tat, long now) {
		if (tat == null || tat.micros() < now) {
			return 0;
		}
		long micros = tat.micros() - now;
		if (micros > this.tolerance / this.q + 1) {
			return this.tolerance;
		}
		return Math.min(this.tolerance, micros * this.q + tat.ticks());
	}

	private GcraState at(long now, long ahead) {
		return new GcraState(now + ahead / this.q, ahead % this.q);
	}

	private static long ceilDiv(long ticks, long q) {
		return (ticks + q - 1) / q;
	}

}
