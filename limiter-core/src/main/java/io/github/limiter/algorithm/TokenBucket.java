package io.github.limiter.algorithm;

import java.time.Duration;
import java.util.List;

/**
 * Token bucket: a bucket of {@code capacity} tokens, refilled continuously at {@code refillTokens} per
 * {@code refillPeriod}; a call takes {@code cost} tokens and is rejected when the bucket holds fewer. Bursts of up to
 * the capacity pass at once, the long-run rate is the refill rate. A new bucket is full.
 *
 * <p>The refill is continuous, not stepwise: with 10 tokens per second, one token is back 100 ms after it was taken,
 * and rates of many tokens per millisecond are exact. Implemented as {@link Gcra GCRA}, in exact integer arithmetic at
 * any accepted rate: one value of state (about 80 bytes in Redis). Script: {@code gcra.lua}.
 */
public final class TokenBucket extends AbstractLimit<GcraState> {

	private volatile List<String> parameters;

	private final long capacity;

	private final long refillTokens;

	private final Duration refillPeriod;

	private final Gcra gcra;

	private TokenBucket(String name, long capacity, long refillTokens, Duration refillPeriod, Scope scope) {
		super(name, scope);
		this.capacity = positive("capacity", capacity);
		this.refillTokens = positive("refill tokens", refillTokens);
		this.refillPeriod = refillPeriod;
		this.gcra = Gcra.of(micros("refill period", refillPeriod), refillTokens, capacity);
	}

	/**
	 * A bucket of {@code capacity} tokens that refills {@code refillTokens} every {@code refillPeriod}, continuously.
	 * @param name the limit's name
	 * @param capacity the most tokens the bucket holds (the largest burst)
	 * @param refillTokens tokens added per period
	 * @param refillPeriod the period
	 * @return the limit
	 */
	public static TokenBucket of(String name, long capacity, long refillTokens, Duration refillPeriod) {
		return new TokenBucket(name, capacity, refillTokens, refillPeriod, Scope.SHARED);
	}

	/**
	 * Starts a bucket with named settings, so that the capacity and the refill cannot be swapped:
	 * {@code TokenBucket.builder("api").capacity(10).refill(1, Duration.ofSeconds(1)).build()}.
	 * @param name the limit's name
	 * @return a builder
	 */
	public static Builder builder(String name) {
		return new Builder(name);
	}

	/**
	 * A bucket of {@code capacity} tokens that refills all of them every {@code period}.
	 * @param name the limit's name
	 * @param capacity tokens per period, also the largest burst
	 * @param period the period
	 * @return the limit
	 */
	public static TokenBucket of(String name, long capacity, Duration period) {
		return of(name, capacity, capacity, period);
	}

	/**
	 * The same limit with another scope.
	 * @param scope the scope
	 * @return a new limit
	 */
	public TokenBucket withScope(Scope scope) {
		return new TokenBucket(name(), this.capacity, this.refillTokens, this.refillPeriod, scope);
	}

	@Override
	public TokenBucket dividedBy(int instances) {
		// The same tokens over a period n times longer: exactly 1/n of the rate.
		return new TokenBucket(name(), share(this.capacity, instances), this.refillTokens,
				this.refillPeriod.multipliedBy(instances), scope());
	}

	@Override
	public Algorithm algorithm() {
		return Algorithm.TOKEN_BUCKET;
	}

	@Override
	public long capacity() {
		return this.capacity;
	}

	/**
	 * Tokens added per {@link #refillPeriod()}.
	 * @return the refill amount
	 */
	public long refillTokens() {
		return this.refillTokens;
	}

	/**
	 * Period over which {@link #refillTokens()} are added.
	 * @return the period
	 */
	public Duration refillPeriod() {
		return this.refillPeriod;
	}

	@Override
	public Duration window() {
		return retention();
	}

	@Override
	public Duration retention() {
		return Duration.ofNanos(this.gcra.toleranceMicros() * 1000);
	}

	@Override
	public Outcome<GcraState> evaluate(GcraState tat, long now, long cost) {
		return this.gcra.evaluate(tat, now, cost);
	}

	@Override
	public GcraState record(GcraState tat, long now, long cost) {
		return this.gcra.record(tat, now, cost);
	}

	@Override
	public long expiresAtMicros(GcraState tat) {
		return this.gcra.expiresAtMicros(tat);
	}

	@Override
	public List<String> scriptParameters(long clientNowMicros) {
		if (this.parameters == null) {
			// Built once: the hot path of every Redis decision reads it.
			this.parameters = List.of(algorithm().code(), Long.toString(this.capacity), Long.toString(this.gcra.interval()),
					Long.toString(this.capacity), "-1",
					Long.toString(this.gcra.ticksPerMicro()));
		}
		return this.parameters;
	}

	@Override
	List<Object> definition() {
		return List.of(this.capacity, this.refillTokens, this.refillPeriod);
	}

	@Override
	public String toString() {
		return "TokenBucket[" + name() + ": capacity " + this.capacity + ", " + this.refillTokens + " per " + this.refillPeriod + "]";
	}


	/**
	 * Builder of {@link TokenBucket}: a capacity and a refill, named.
	 */
	public static final class Builder {

		private final String name;

		private long capacity;

		private long refillTokens;

		private Duration refillPeriod;

		private Scope scope = Scope.SHARED;

		private Builder(String name) {
			this.name = name;
		}

		/**
		 * The most tokens the bucket holds: the largest burst. By default the tokens of one refill.
		 * @param capacity a positive number
		 * @return this builder
		 */
		public Builder capacity(long capacity) {
			this.capacity = capacity;
			return this;
		}

		/**
		 * The refill: {@code tokens} every {@code period}, added continuously.
		 * @param tokens tokens per period, positive
		 * @param period the period
		 * @return this builder
		 */
		public Builder refill(long tokens, Duration period) {
			this.refillTokens = tokens;
			this.refillPeriod = period;
			return this;
		}

		/**
		 * Who shares the limit ({@link Scope#SHARED} by default).
		 * @param scope the scope
		 * @return this builder
		 */
		public Builder scope(Scope scope) {
			this.scope = scope;
			return this;
		}

		/**
		 * Builds the bucket.
		 * @return the limit
		 * @throws IllegalArgumentException when a setting is missing or out of range
		 */
		public TokenBucket build() {
			if (this.refillPeriod == null) {
				throw new IllegalArgumentException("refill of token bucket '" + this.name + "' must be set");
			}
			long capacity = (this.capacity != 0) ? this.capacity : this.refillTokens;
			return new TokenBucket(this.name, capacity, this.refillTokens, this.refillPeriod, this.scope);
		}

	}

}
