package io.github.limiter.backend.redis;

import java.util.concurrent.ConcurrentHashMap;

import io.github.limiter.Decision;

/**
 * Rejections Redis gave this JVM, remembered until their retry time, so that a flood on a key over its limit costs
 * no Redis command.
 *
 * <p>A rejection of cost {@code c} on a key with a retry time {@code t} is a fact until {@code t}: permits come back
 * only as time passes, and the retry time is exactly when enough have come back for {@code c}; other instances can
 * only take more. So until {@code t}, Redis would reject every call of cost {@code c} on that key, with the same
 * retry time, and that is the only answer this cache gives. Calls with another cost, and every call after {@code t},
 * go to Redis.
 *
 * <p>Times are measured on the caller's monotonic clock from the moment the rejected call was sent, which is never
 * later than the moment Redis decided it, and the retry time is shortened by 0.1% to stay ahead of any drift between
 * the two clocks: the cache may send a call to Redis a little early, never answer one Redis would admit. A cached
 * answer reports the time left until the remembered retry time, and the remaining permits Redis reported (both as
 * Redis would report them unless another instance has consumed since, which only makes the real retry time later). What the cache cannot see: a reset or a Redis that lost its data (restarted without
 * persistence) re-admits at once, while this JVM still answers from the cache until the retry time; a reset made
 * through this JVM forgets the key.
 */
final class DenialCache {

	/** Between two sweeps of a full cache. */
	private static final long SWEEP_INTERVAL_MICROS = 1_000_000;

	private final ConcurrentHashMap<String, Denial> denials = new ConcurrentHashMap<>();

	private final int maxEntries;

	private volatile long nextSweepMicros;

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
	 * @param limitName the limit's name
	 * @param cost the cost asked
	 * @param nowMicros the monotonic clock
	 * @return a rejection, or {@code null} to ask Redis
	 */
	Decision lookup(String key, String limitName, long cost, long nowMicros) {
		Denial denial = this.denials.get(key);
		if (denial == null) {
			return null;
		}
		if (nowMicros >= denial.untilMicros) {
			this.denials.remove(key, denial);
			return null;
		}
		if (cost != denial.cost) {
			return null;
		}
		long elapsed = nowMicros - denial.sentMicros;
		return Decision.of(limitName, false, denial.limit, denial.remaining, denial.retryAtMicros - nowMicros,
				Math.max(0, denial.resetAfterMicros - elapsed), 0, denial.redisTimeMicros + elapsed, null);
	}

	/**
	 * Remembers a rejection.
	 * @param key the Redis key of the request
	 * @param cost the cost that was rejected
	 * @param rejection Redis's answer
	 * @param sentMicros the monotonic clock when the call was sent (before Redis decided it)
	 */
	void remember(String key, long cost, Decision rejection, long sentMicros) {
		long retry = rejection.retryAfterMicros();
		long until = sentMicros + retry - retry / 1000 - 1;
		if (rejection.allowed() || until <= sentMicros) {
			return;
		}
		if (this.denials.size() >= this.maxEntries && !makeRoom(sentMicros)) {
			return;
		}
		Denial denial = new Denial(until, sentMicros + retry, cost, rejection.limit(), rejection.remaining(), rejection.resetAfterMicros(),
				rejection.timeMicros(), sentMicros);
		this.denials.put(key, denial);
	}

	/**
	 * Forgets a key whose state improved through this JVM (a reset or a refund).
	 * @param key the Redis key
	 */
	void forget(String key) {
		this.denials.remove(key);
	}

	/**
	 * Number of remembered keys, expired ones included until they are swept.
	 * @return the size
	 */
	int size() {
		return this.denials.size();
	}

	private boolean makeRoom(long nowMicros) {
		if (nowMicros < this.nextSweepMicros) {
			return false;
		}
		this.nextSweepMicros = nowMicros + SWEEP_INTERVAL_MICROS;
		this.denials.values().removeIf(denial -> denial.untilMicros <= nowMicros);
		return this.denials.size() < this.maxEntries;
	}

	private record Denial(long untilMicros, long retryAtMicros, long cost, long limit, long remaining, long resetAfterMicros,
			long redisTimeMicros, long sentMicros) {
	}

}
