package io.github.limiter.algorithm;

import io.github.limiter.Decision;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * Token bucket: a bucket of {@code capacity} tokens, refilled continuously at {@code refillTokens} per
 * {@code refillPeriod}; a call takes {@code cost} tokens and is rejected when the bucket holds fewer. Bursts of up to
 * the capacity pass at once, the long-run rate is the refill rate. A new bucket is full.
 *
 * <p>The refill is continuous, not stepwise: with 10 tokens per second, one token is back 100 ms after it was taken,
 * and rates of many tokens per millisecond are exact. Implemented as {@link Gcra GCRA}, in exact integer arithmetic at
 * any accepted rate: one value of state (about 80 bytes in Redis). Script: {@code gcra.lua}.
 *
 * <p><b>Warm-up.</b> A bucket built with a {@link Builder#warmup(Duration) warm-up} starts cold, as Guava's
 * {@code RateLimiter.create(rate, warmup)} does: after being idle (and when new) it admits a third of its rate and a
 * third of its burst, and reaches its full rate over the warm-up period of steady demand, so that a cold service is
 * not hit by the full burst. It keeps its idleness in the same key, which lives until the bucket is cold again
 * (up to the warm-up period longer). With a capacity of 1 it admits what Guava's warming limiter admits on the same
 * arrivals. See {@link Gcra} for the arithmetic.
 */
public final class TokenBucket extends AbstractLimit<GcraState> {

	private volatile List<String> parameters;

	private final long capacity;

	private final long refillTokens;

	private final Duration refillPeriod;

	/** The warm-up period, {@link Duration#ZERO} for none. */
	private final Duration warmup;

	private final Gcra gcra;

	private TokenBucket(String name, long capacity, long refillTokens, Duration refillPeriod, Duration warmup,
			Scope scope) {
		super(name, scope);
		this.capacity = positive("capacity", capacity);
		this.refillTokens = positive("refill tokens", refillTokens);
		this.refillPeriod = refillPeriod;
		long periodMicros = micros("refill period", refillPeriod);
		Gcra gcra = gcra(() -> Gcra.of(periodMicros, refillTokens, capacity));
		this.warmup = (warmup != null) ? warmup : Duration.ZERO;
		if (this.warmup.isZero()) {
			this.gcra = gcra;
		}
		else {
			long warmupMicros = micros("warm-up", this.warmup);
			this.gcra = gcra(() -> gcra.warmingUp(warmupMicros));
		}
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
		return new TokenBucket(name, capacity, refillTokens, refillPeriod, null, Scope.SHARED);
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
		return new TokenBucket(name(), this.capacity, this.refillTokens, this.refillPeriod, this.warmup, scope);
	}

	/**
	 * The same limit, warming up over the given period after being idle ({@link Duration#ZERO} for none).
	 * @param warmup the warm-up period
	 * @return a new limit
	 */
	public TokenBucket withWarmup(Duration warmup) {
		return new TokenBucket(name(), this.capacity, this.refillTokens, this.refillPeriod, warmup, scope());
	}

	/** Always: the rate divides exactly, and a burst shared below one permit per instance keeps one. */
	@Override
	public boolean divisibleAmong(int instances) {
		checkInstances(instances);
		return true;
	}

	@Override
	public TokenBucket dividedBy(int instances) {
		// The same tokens over a period n times longer: exactly 1/n of the rate.
		return new TokenBucket(name(), share(this.capacity, instances), this.refillTokens,
				this.refillPeriod.multipliedBy(instances), this.warmup, scope());
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

	/**
	 * The period over which a cold bucket reaches its full rate, {@link Duration#ZERO} for a bucket without warm-up.
	 * @return the warm-up period
	 */
	public Duration warmup() {
		return this.warmup;
	}

	@Override
	public Duration window() {
		return Duration.ofNanos(this.gcra.toleranceMicros() * 1000);
	}

	@Override
	public Duration retention() {
		return Duration.ofNanos(this.gcra.retentionMicros() * 1000);
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
	public GcraState refund(GcraState tat, long now, long cost, Decision charged) {
		return this.gcra.refund(tat, now, cost, charged.timeMicros());
	}

	@Override
	public long expiresAtMicros(GcraState tat) {
		return this.gcra.expiresAtMicros(tat);
	}

	@Override
	public List<String> scriptParameters(long clientNowMicros) {
		if (this.parameters == null) {
			// Built once: the hot path of every Redis decision reads it.
			List<String> parameters = new ArrayList<>(List.of(algorithm().code(), Long.toString(this.capacity),
					Long.toString(this.gcra.interval()), Long.toString(this.capacity), "-1",
					Long.toString(this.gcra.ticksPerMicro())));
			if (this.gcra.warmupTicks() > 0) {
				parameters.add(Long.toString(this.gcra.warmupTicks()));
			}
			this.parameters = List.copyOf(parameters);
		}
		return this.parameters;
	}

	@Override
	List<Object> definition() {
		return List.of(this.capacity, this.refillTokens, this.refillPeriod, this.warmup);
	}

	@Override
	public String toString() {
		return "TokenBucket[" + name() + ": capacity " + this.capacity + ", " + this.refillTokens + " per " + this.refillPeriod
				+ (this.warmup.isZero() ? "" : ", warm-up " + this.warmup) + scopeText() + "]";
	}


	/**
	 * Builder of {@link TokenBucket}: a capacity and a refill, named.
	 */
	public static final class Builder {

		private final String name;

		/** The capacity set, or {@code null} for the tokens of one refill. */
		private Long capacity;

		private long refillTokens;

		private Duration refillPeriod;

		private Duration warmup;

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
		 * Starts the bucket cold and warms it up over the given period, as Guava's warming {@code RateLimiter}: after
		 * being idle, it admits a third of its rate and burst and reaches its full rate over this period of steady
		 * demand. None by default.
		 * @param warmup a positive period, or {@link Duration#ZERO} for none
		 * @return this builder
		 */
		public Builder warmup(Duration warmup) {
			this.warmup = warmup;
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
			long capacity = (this.capacity != null) ? this.capacity : this.refillTokens;
			return new TokenBucket(this.name, capacity, this.refillTokens, this.refillPeriod, this.warmup, this.scope);
		}

	}

}
