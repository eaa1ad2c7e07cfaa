package io.github.limiter.algorithm;

/**
 * The rate limiting algorithms. Each is one class in this package (pure logic, the time passed in) and one Lua script
 * for Redis, with the same semantics on every backend.
 */
public enum Algorithm {

	/** N per window; windows aligned to the epoch or to calendar boundaries. See {@link FixedWindow}. */
	FIXED_WINDOW,

	/** Exact: at most N in any interval of one window length. See {@link SlidingWindowLog}. */
	SLIDING_WINDOW_LOG,

	/** O(1) approximation of a sliding window from two fixed windows. See {@link SlidingWindowCounter}. */
	SLIDING_WINDOW_COUNTER,

	/** Capacity and refill rate; bursts up to capacity. See {@link TokenBucket}. */
	TOKEN_BUCKET,

	/** nginx {@code limit_req}: rate and burst, excess rejected, queued or served at once. See {@link LeakyBucket}. */
	LEAKY_BUCKET

}
