package io.github.limiter.algorithm;

import java.time.Duration;
import java.util.List;

import io.github.limiter.Decision;

/**
 * Leaky bucket with the semantics of nginx {@code limit_req}: requests drain at {@code rate} per {@code period};
 * up to {@code burst} requests beyond the rate are accepted into the bucket, any more are rejected.
 *
 * <p>Of the requests in excess of the rate, the first {@code delay} are served at once and the others wait their
 * turn: an admitted request gets a {@link io.github.limiter.Decision#delay() delay}, the time it must wait so that
 * requests leave at the rate (nginx {@code burst=N delay=M}, two-stage limiting). {@link #queueing} is
 * {@code delay=0}, every excess request waits; {@link #nodelay} is {@code delay=burst}, the whole burst is served at
 * once while the bucket still drains at the rate, so the next burst must wait for room. Implemented as
 * {@link Gcra GCRA} with capacity {@code burst + 1}. Script: {@code gcra.lua}.
 */
public final class LeakyBucket extends AbstractLimit<GcraState> {

	private volatile List<String> parameters;

	private final long rate;

	private final Duration period;

	private final long burst;

	/** Excess requests served without a delay: 0 queues them all, {@code burst} none. */
	private final long delay;

	private final Gcra gcra;

	/** Longest delay a queued call accepts, in microseconds; negative for the bucket's own bound. */
	private final long maxDelayMicros;

	/** The last bounded copy {@link #withMaxDelay} made, reused while callers ask for the same bound. */
	private volatile LeakyBucket bounded;

	private LeakyBucket(String name, long rate, Duration period, long burst, long delay, Scope scope,
			long maxDelayMicros) {
		super(name, scope);
		this.maxDelayMicros = maxDelayMicros;
		this.rate = positive("rate", rate);
		if (burst < 0) {
			throw invalid("burst must not be negative but was " + burst);
		}
		if (burst >= MAX_PERMITS) {
			// The capacity is the burst and one: it stays within the permits that Redis Lua counts exactly.
			throw invalid("burst must be at most " + (MAX_PERMITS - 1) + " but was " + burst);
		}
		if (delay < 0 || delay > burst) {
			throw invalid("delay must be between 0 and the burst " + burst + " but was " + delay);
		}
		this.period = period;
		this.burst = burst;
		this.delay = delay;
		long periodMicros = micros("period", period);
		this.gcra = gcra(() -> Gcra.of(periodMicros, rate, burst + 1));
	}

	/**
	 * A bucket draining {@code rate} requests per {@code period} that queues up to {@code burst} excess requests.
	 * @param name the limit's name
	 * @param rate requests per period
	 * @param period the period
	 * @param burst excess requests accepted, 0 for none
	 * @return the limit
	 */
	public static LeakyBucket queueing(String name, long rate, Duration period, long burst) {
		return new LeakyBucket(name, rate, period, burst, 0, Scope.SHARED, -1);
	}

	/**
	 * A bucket draining {@code rate} requests per {@code period} that serves up to {@code burst} excess requests at
	 * once (nginx {@code nodelay}).
	 * @param name the limit's name
	 * @param rate requests per period
	 * @param period the period
	 * @param burst excess requests accepted, 0 for none
	 * @return the limit
	 */
	public static LeakyBucket nodelay(String name, long rate, Duration period, long burst) {
		return new LeakyBucket(name, rate, period, burst, burst, Scope.SHARED, -1);
	}

	/**
	 * A bucket draining {@code rate} requests per {@code period} that accepts {@code burst} excess requests, serves
	 * the first {@code delay} of them at once and queues the rest (nginx {@code burst=N delay=M}).
	 * @param name the limit's name
	 * @param rate requests per period
	 * @param period the period
	 * @param burst excess requests accepted, 0 for none
	 * @param delay excess requests served without waiting, from 0 (as {@link #queueing}) to {@code burst} (as
	 * {@link #nodelay})
	 * @return the limit
	 */
	public static LeakyBucket twoStage(String name, long rate, Duration period, long burst, long delay) {
		return new LeakyBucket(name, rate, period, burst, delay, Scope.SHARED, -1);
	}

	/**
	 * The same limit with another scope.
	 * @param scope the scope
	 * @return a new limit
	 */
	public LeakyBucket withScope(Scope scope) {
		return new LeakyBucket(name(), this.rate, this.period, this.burst, this.delay, scope, this.maxDelayMicros);
	}

	/**
	 * The same bucket, sharing its state, for calls that wait at most {@code maxDelay} for their turn: a queued call
	 * whose turn is further away is rejected, taking nothing, with the time until the queue is short enough as its
	 * retry-after. A {@code nodelay} bucket never delays, so it is returned as it is.
	 * @param maxDelay the longest delay, zero for none
	 * @return the bounded bucket
	 */
	@Override
	public LeakyBucket withMaxDelay(Duration maxDelay) {
		if (maxDelay == null) {
			throw invalid("max delay must be set (Duration.ZERO for none)");
		}
		if (maxDelay.isNegative()) {
			throw invalid("max delay must not be negative but was " + maxDelay);
		}
		long micros = (maxDelay.compareTo(MAX_DURATION) > 0) ? MAX_DURATION.toNanos() / 1000 : maxDelay.toNanos() / 1000;
		if (nodelay() || micros == this.maxDelayMicros) {
			return this;
		}
		LeakyBucket known = this.bounded;
		if (known != null && known.maxDelayMicros == micros) {
			return known;
		}
		LeakyBucket copy = new LeakyBucket(name(), this.rate, this.period, this.burst, this.delay, scope(), micros);
		this.bounded = copy;
		return copy;
	}

	/**
	 * The longest delay a queued call accepts, set by {@link #withMaxDelay}.
	 * @return the bound, or {@code null} for the bucket's own ({@code burst} turns)
	 */
	public Duration maxDelay() {
		return (this.maxDelayMicros < 0) ? null : Duration.ofNanos(this.maxDelayMicros * 1000);
	}

	/** Always: the rate divides exactly, and a burst shared below one permit per instance keeps one. */
	@Override
	public boolean divisibleAmong(int instances) {
		checkInstances(instances);
		return true;
	}

	@Override
	public LeakyBucket dividedBy(int instances) {
		long burst = this.burst / checkInstances(instances);
		return new LeakyBucket(name(), this.rate, this.period.multipliedBy(instances), burst,
				Math.min(burst, this.delay / instances), scope(), this.maxDelayMicros);
	}

	@Override
	public Algorithm algorithm() {
		return Algorithm.LEAKY_BUCKET;
	}

	@Override
	public long capacity() {
		return this.burst + 1;
	}

	/**
	 * Excess requests accepted beyond the rate.
	 * @return the burst
	 */
	public long burst() {
		return this.burst;
	}

	/**
	 * Excess requests served at once; the others wait their turn.
	 * @return from 0 (all queued) to {@link #burst()} (none)
	 */
	public long delay() {
		return this.delay;
	}

	/**
	 * Whether requests within the burst are served at once instead of queued.
	 * @return {@code true} for nginx {@code nodelay}
	 */
	public boolean nodelay() {
		return this.delay == this.burst;
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
		return this.gcra.evaluate(tat, now, cost, this.delay, this.maxDelayMicros);
	}

	@Override
	public boolean admitsAfterWaiting(Decision refusal) {
		return !this.gcra.turnBeyond(refusal.resetAfterMicros(), this.delay, this.maxDelayMicros);
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
			this.parameters = List.of(algorithm().code(), Long.toString(this.burst + 1), Long.toString(this.gcra.interval()),
					Long.toString(this.delay), Long.toString(this.maxDelayMicros), Long.toString(this.gcra.ticksPerMicro()));
		}
		return this.parameters;
	}

	@Override
	List<Object> definition() {
		return List.of(this.rate, this.period, this.burst, this.delay, this.maxDelayMicros);
	}

	@Override
	public String toString() {
		return "LeakyBucket[" + name() + ": " + this.rate + " per " + this.period + ", burst " + this.burst
				+ (nodelay() ? ", nodelay" : (this.delay > 0) ? ", delay " + this.delay : "")
				+ ((this.maxDelayMicros >= 0) ? ", max delay " + maxDelay() : "") + scopeText() + "]";
	}

}
