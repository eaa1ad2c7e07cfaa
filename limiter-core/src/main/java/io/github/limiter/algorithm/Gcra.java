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
 *
 * <p><b>Warm-up</b> (a token bucket's, after Guava's {@code SmoothWarmingUp}). A warming bucket also stores its
 * idleness: time during which its arrival time lay in the past, in ticks, up to the warm-up period {@code W} (a new
 * key is as cold as can be). A permit taken from that store above its middle costs more time than the stable
 * interval: {@code T·(1 + 4x/W)} for {@code x} ticks stored above {@code W/2}, up to {@code 3T} when fully cold, so a
 * cold bucket admits a third of its rate and its burst, and reaches its full rate after taking {@code W} of time
 * under saturated demand. A call is admitted by the stable test ({@code ahead + c·T ≤ C·T}) and then pushes the
 * arrival time by its full cost: with a capacity of 1, exactly Guava's {@code RateLimiter.create(rate, warmup)}. The
 * surcharge is the only value not held in integers: computed in doubles, with the same operations in the same order
 * in Java and Lua, it is the same to the bit on every backend, then rounded up to whole ticks.
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

	/** Warm-up period in ticks, 0 for none. */
	private final long warmup;

	/** Farthest the arrival time may lie ahead: a full bucket, or three for a warming one (cold permits). */
	private final long ceiling;

	/**
	 * Farthest ahead an arrival time is read: for a plain bucket 2^52 ticks (years), so that one left by a larger
	 * capacity (a retuned limit) or a clock that went back is read as it is, and a refusal's retry-after says when the
	 * call can pass; a warming bucket's ceiling. Within 2^53 with any call's cost added, as the Lua doubles need.
	 */
	private final long readCeiling;

	private Gcra(long interval, long q, long capacity, long warmup) {
		this.interval = interval;
		this.q = q;
		this.capacity = capacity;
		this.tolerance = capacity * interval;
		this.warmup = warmup;
		this.ceiling = (warmup > 0) ? 3 * this.tolerance : this.tolerance;
		this.readCeiling = (warmup > 0) ? this.ceiling : Math.max(this.tolerance, READ_CEILING);
	}

	/** 2^52 ticks: a plain bucket's {@link #readCeiling}, as {@code gcra.lua}'s. */
	private static final long READ_CEILING = 1L << 52;

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
		return new Gcra(interval, q, capacity, 0);
	}

	/**
	 * The same bucket warming up over the given period.
	 * @param warmupMicros the warm-up period, positive
	 * @return a warming bucket
	 */
	Gcra warmingUp(long warmupMicros) {
		if (warmupMicros > MAX_TICKS / this.q || this.capacity > MAX_TICKS / 3 / this.interval) {
			throw new IllegalArgumentException("warm-up of " + warmupMicros + "us with capacity " + this.capacity
					+ " cannot be held exactly: it takes more than 2^53 steps of 1/" + this.q + " us");
		}
		return new Gcra(this.interval, this.q, this.capacity, warmupMicros * this.q);
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

	/** Longest time a state must be kept: until its arrival time, and for a warming bucket until it is cold. */
	long retentionMicros() {
		if (this.warmup == 0) {
			return toleranceMicros();
		}
		return ceilDiv(this.ceiling, this.q) + this.warmup / this.q + 1;
	}

	/** Warm-up period in ticks, 0 for none. */
	long warmupTicks() {
		return this.warmup;
	}

	Outcome<GcraState> evaluate(GcraState tat, long now, long cost) {
		if (this.warmup > 0) {
			return evaluateWarming(tat, now, cost);
		}
		return evaluate(tat, now, cost, this.capacity, -1);
	}

	private Outcome<GcraState> evaluateWarming(GcraState state, long now, long cost) {
		long ahead = ahead(state, now);
		long stored = stored(state, now, ahead);
		long wait = ahead + cost * this.interval;
		if (wait > this.tolerance) {
			long retryAfter = Math.max(1, ceilDiv(wait - this.tolerance, this.q));
			return new Outcome<>(false, remainingWarming(ahead, stored), retryAfter, ceilDiv(ahead, this.q), 0, state);
		}
		long spent = Math.min(cost * this.interval, stored);
		long aheadAfter = wait + surcharge(stored, spent);
		long storedAfter = stored - spent;
		return new Outcome<>(true, remainingWarming(aheadAfter, storedAfter), 0, ceilDiv(aheadAfter, this.q), 0,
				at(now, aheadAfter, storedAfter));
	}

	/** Stored idleness now: a new key is cold; idle time accrues while the arrival time lies in the past. */
	private long stored(GcraState state, long now, long ahead) {
		if (state == null) {
			return this.warmup;
		}
		if (ahead > 0 || state.micros() >= now) {
			return storedTicks(state);
		}
		if (now - state.micros() > this.warmup / this.q + 1) {
			return this.warmup;
		}
		return Math.min(this.warmup, storedTicks(state) + (now - state.micros()) * this.q - state.ticks());
	}

	/**
	 * A state's stored idleness in this bucket's ticks: it is kept in whole microseconds, so that a bucket retuned to
	 * another subdivision of the microsecond reads it as the same time.
	 */
	private long storedTicks(GcraState state) {
		return Math.min(state.stored(), this.warmup / this.q) * this.q;
	}

	/**
	 * Time, beyond the stable interval, that taking {@code spent} ticks of stored idleness costs: the area between
	 * the stable interval and the line rising from {@code T} at {@code W/2} to {@code 3T} at {@code W}, over the part
	 * of {@code [stored − spent, stored]} above {@code W/2}. Doubles, in the order of {@code gcra.lua}.
	 */
	private long surcharge(long stored, long spent) {
		double above = stored - this.warmup / 2.0;
		if (above <= 0 || spent == 0) {
			return 0;
		}
		double taken = Math.min(above, spent);
		return (long) Math.ceil(2 * taken * (2 * above - taken) / this.warmup);
	}

	/**
	 * Calls of one permit still admitted now: the stable test admits while the arrival time is at most
	 * {@code (C − 1)·T} ahead, and each such call costs at most the present price of a permit, since the price falls
	 * as the store empties. A lower bound while cold, exact once warm.
	 */
	private long remainingWarming(long ahead, long stored) {
		long room = this.tolerance - this.interval - ahead;
		if (room < 0) {
			return 0;
		}
		double above = Math.max(0, stored - this.warmup / 2.0);
		double price = this.interval + 4 * this.interval * above / this.warmup;
		return Math.min(this.capacity, (long) Math.floor(room / price) + 1);
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
		return new Outcome<>(allowed, remaining, retryAfter, resetAfter, delay, allowed ? at(now, aheadAfter, 0) : tat);
	}

	/**
	 * Whether a call refused under a bound on its delay was refused by that bound (its turn, the end of the queue
	 * ahead of it less what is served at once, lies beyond the bound) rather than by a full queue: read from the
	 * refusal's reset-after, which is how far the end of the queue lies, rounded up to a microsecond, so only when
	 * that holds for the end of the queue a microsecond nearer too (a refusal within that tick is taken as curable).
	 * @param resetAfterMicros the refusal's reset-after
	 * @param delayFree permits served without a delay
	 * @param maxDelayMicros the bound on the delay, negative for none
	 */
	boolean turnBeyond(long resetAfterMicros, long delayFree, long maxDelayMicros) {
		if (maxDelayMicros < 0) {
			return false;
		}
		long free = Math.min(delayFree, this.capacity) * this.interval;
		long bound = Math.min(maxDelayMicros, toleranceMicros()) * this.q;
		return (resetAfterMicros - 1) * this.q - free >= bound;
	}

	GcraState record(GcraState tat, long now, long cost) {
		long ahead = ahead(tat, now);
		if (this.warmup == 0) {
			return at(now, Math.min(ahead + cost * this.interval, this.tolerance), 0);
		}
		long stored = stored(tat, now, ahead);
		long spent = Math.min(cost * this.interval, stored);
		long charged = ahead + cost * this.interval + surcharge(stored, spent);
		return at(now, Math.max(ahead, Math.min(charged, this.tolerance)), stored - spent);
	}

	/**
	 * Gives back what is left of a call's time: its cost's time less what has drained since it was charged (the call's
	 * slice drains at most as fast as time passes, and only after the slices before it, which refunds since may have
	 * moved), so a refund never gives back time that later calls hold. Not the whole of it when the state looks as the
	 * call left it: a state can return to the same arrival time through other calls (a review served three calls from
	 * an empty bucket of two that way). A warming bucket keeps its surcharge and the idleness spent. As
	 * {@code gcra.lua}.
	 */
	GcraState refund(GcraState tat, long now, long cost, long chargedAt) {
		if (tat == null) {
			return null;
		}
		long slice = cost * this.interval;
		long elapsed = Math.max(0, now - chargedAt);
		if (elapsed >= ceilDiv(slice, this.q)) {
			return tat;
		}
		long ahead = ahead(tat, now);
		long stored = (this.warmup == 0) ? 0 : stored(tat, now, ahead);
		return at(now, Math.max(0, ahead - (slice - elapsed * this.q)), stored);
	}

	long expiresAtMicros(GcraState tat) {
		long arrival = tat.micros() + ((tat.ticks() > 0) ? 1 : 0);
		return (this.warmup == 0) ? arrival : arrival + ceilDiv(this.warmup - storedTicks(tat), this.q);
	}

	/**
	 * Ticks from now to the theoretical arrival time, never more than the read ceiling: years for a plain bucket, three
	 * full buckets for a warming one (a clock that went back).
	 */
	private long ahead(GcraState tat, long now) {
		if (tat == null || tat.micros() < now) {
			return 0;
		}
		long micros = tat.micros() - now;
		if (micros > this.readCeiling / this.q + 1) {
			return this.readCeiling;
		}
		return Math.min(this.readCeiling, micros * this.q + tat.ticks());
	}

	/**
	 * The state of an arrival time {@code ahead} ticks from now, with {@code stored} ticks of idleness; none for a full
	 * bucket (cold again, when it warms up), as {@code gcra.lua} deletes its key, so that a clock that went back reads
	 * it full on every backend.
	 */
	private GcraState at(long now, long ahead, long stored) {
		if (ahead <= 0 && (this.warmup == 0 || (stored / this.q) * this.q >= this.warmup)) {
			return null;
		}
		return new GcraState(now + ahead / this.q, ahead % this.q, stored / this.q);
	}

	private static long ceilDiv(long ticks, long q) {
		return (ticks + q - 1) / q;
	}

}
