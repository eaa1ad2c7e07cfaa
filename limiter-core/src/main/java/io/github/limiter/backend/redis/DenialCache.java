package io.github.limiter.backend.redis;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

import io.github.limiter.Decision;
import io.github.limiter.Limit;

/**
 * Rejections Redis gave this JVM, remembered until their retry time, so that a flood on a key over its limit costs
 * no Redis command.
 *
 * <p>A rejection of cost {@code c} on a key with a retry time {@code t} is a fact until {@code t}: permits come back
 * only as time passes, and the retry time is exactly when enough have come back for {@code c}; other instances can
 * only take more. So until {@code t}, Redis would reject every call of cost {@code c} on that key, with the same
 * retry time, and that is the only answer this cache gives. Calls with another cost or another limit object, and
 * every call after {@code t}, go to Redis; one of another cost or limit that may consume (not a check) drops the key's
 * entry.
 *
 * <p>Two things can give permits back early: a refund (a multi-limit decision across Redis Cluster slots, or next to
 * a Redisson {@code RRateLimiter}, that takes permits and returns them when another part rejects) and a reset. So
 * an entry is trusted for at most {@link #MAX_AGE_MICROS} (one second), whatever its retry time: a flood still costs
 * at most one Redis call per key and second, and a rejection that a refund elsewhere made stale lasts at most that
 * long here. A reset or refund through this JVM forgets the key at once, and a rejection that was in flight while
 * one happened is not remembered. So does a decision through this JVM that consumes on the key without passing by the
 * cache (a record, or a decision over several limits): the retry time it remembered would now be too early.
 *
 * <p>Times are measured on the caller's monotonic clock from the moment the rejected call was sent, which is never
 * later than the moment Redis decided it, and the retry time is shortened by 0.1% to stay ahead of any drift between
 * the two clocks. A cached answer reports the time left until the remembered retry time (as Redis would report it
 * unless another instance has consumed since, which only makes the real retry time later), and the remaining permits
 * Redis reported at the rejection: a lower bound, since permits come back with time, which Redis would count. A reset through another instance, or a Redis that lost its data, re-admits at once, while
 * this JVM may answer from the cache for up to a second more.
 */
final class DenialCache {

	/** Longest an entry is trusted. */
	static final long MAX_AGE_MICROS = 1_000_000;

	/** Between two sweeps of the expired entries. */
	private static final long SWEEP_INTERVAL_MICROS = 1_000_000;

	private final ConcurrentHashMap<String, Denial> denials = new ConcurrentHashMap<>();

	private final int maxEntries;

	private final AtomicLong nextSweepMicros = new AtomicLong(Long.MIN_VALUE);

	/** The background sweep's own schedule: it must not put off the sweep that makes room in a full cache. */
	private final AtomicLong nextBackgroundSweepMicros = new AtomicLong(Long.MIN_VALUE);

	/** Moves on every reset or refund: a rejection sent before one is not remembered. */
	private final AtomicLong generation = new AtomicLong();

	/**
	 * Creates a cache.
	 * @param maxEntries at most this many keys are remembered; when full, expired entries are swept at most once a
	 * second and new rejections are not remembered until there is room
	 */
	DenialCache(int maxEntries) {
		if (maxEntries < 1) {
			throw new IllegalArgumentException("the denial cache needs room for at least one key, not " + maxEntries);
		}
		this.maxEntries = maxEntries;
	}

	/**
	 * The answer Redis would give, if this cache knows it.
	 * @param key the Redis key of the request
	 * @param limit the limit
	 * @param cost the cost asked
	 * @param nowMicros the monotonic clock
	 * @param consumes whether the call may consume (an acquire): one of another cost or limit then forgets the key
	 * @return a rejection, or {@code null} to ask Redis
	 */
	Decision lookup(String key, Limit limit, long cost, long nowMicros, boolean consumes) {
		Denial denial = this.denials.get(key);
		if (denial == null) {
			return null;
		}
		if (nowMicros >= denial.untilMicros) {
			this.denials.remove(key, denial);
			return null;
		}
		if (cost != denial.cost || !limit.equals(denial.limit)) {
			if (consumes) {
				// The call goes to Redis and may consume on the key: the retry time remembered would then be too early.
				// Only this key's entry goes: the generation, which all keys share, is left alone, since a bound on a
				// queue's delay makes each call of a waiting acquire another limit (a rejection in flight on this key
				// meanwhile may still be remembered, for at most a second).
				this.denials.remove(key, denial);
			}
			return null;
		}
		long elapsed = nowMicros - denial.sentMicros;
		return Decision.of(limit.name(), false, denial.capacity, denial.remaining, denial.retryAtMicros - nowMicros,
				Math.max(0, denial.resetAfterMicros - elapsed), 0, denial.redisTimeMicros + elapsed, null)
			.withOrigin(Decision.Origin.REMEMBERED);
	}

	/** Keys remembered, expired or not (for tests). */
	int size() {
		return this.denials.size();
	}

	/**
	 * The generation to pass to {@link #remember}, read before the call is sent.
	 * @return the generation
	 */
	long generation() {
		return this.generation.get();
	}

	/**
	 * Remembers a rejection, unless a reset or refund happened since the call was sent.
	 * @param key the Redis key of the request
	 * @param limit the limit
	 * @param cost the cost that was rejected
	 * @param rejection Redis's answer
	 * @param sentMicros the monotonic clock when the call was sent (before Redis decided it)
	 * @param generation {@link #generation()} when the call was sent
	 */
	void remember(String key, Limit limit, long cost, Decision rejection, long sentMicros, long generation) {
		long retry = rejection.retryAfterMicros();
		long until = sentMicros + Math.min(retry - retry / 1000 - 1, MAX_AGE_MICROS);
		if (rejection.allowed() || until <= sentMicros || this.generation.get() != generation) {
			return;
		}
		if (this.denials.size() >= this.maxEntries) {
			if (!makeRoom(sentMicros)) {
				return;
			}
		}
		else {
			sweepSoon(sentMicros);
		}
		Denial denial = new Denial(until, sentMicros + retry, cost, limit, rejection.limit(), rejection.remaining(), rejection.resetAfterMicros(),
				rejection.timeMicros(), sentMicros);
		this.denials.put(key, denial);
		if (this.generation.get() != generation) {
			// A reset or refund began meanwhile: it may have forgotten the key before this entry went in.
			this.denials.remove(key, denial);
		}
	}

	/**
	 * Forgets a key whose state improves through this JVM (a reset or a refund); called before the reset or refund
	 * is sent and again once it is done, so that no rejection decided before it stays behind.
	 * @param key the Redis key
	 */
	void forget(String key) {
		this.generation.incrementAndGet();
		this.denials.remove(key);
	}

	/**
	 * Drops the expired entries when a sweep is due, on the common pool (this runs on a reply's thread), so that what a
	 * flood of rejections left does not stay until the cache next fills: each entry is good for a second at most. Run by
	 * a rejection remembered: after the last one, what expired stays until the next.
	 */
	private void sweepSoon(long nowMicros) {
		long next = this.nextBackgroundSweepMicros.get();
		if (nowMicros >= next && this.nextBackgroundSweepMicros.compareAndSet(next, nowMicros + SWEEP_INTERVAL_MICROS)) {
			java.util.concurrent.ForkJoinPool.commonPool()
				.execute(() -> this.denials.values().removeIf(denial -> denial.untilMicros <= nowMicros));
		}
	}

	private boolean makeRoom(long nowMicros) {
		long next = this.nextSweepMicros.get();
		if (nowMicros < next || !this.nextSweepMicros.compareAndSet(next, nowMicros + SWEEP_INTERVAL_MICROS)) {
			return false;
		}
		this.denials.values().removeIf(denial -> denial.untilMicros <= nowMicros);
		return this.denials.size() < this.maxEntries;
	}

	private record Denial(long untilMicros, long retryAtMicros, long cost, Limit limit, long capacity, long remaining, long resetAfterMicros,
			long redisTimeMicros, long sentMicros) {
	}

}
