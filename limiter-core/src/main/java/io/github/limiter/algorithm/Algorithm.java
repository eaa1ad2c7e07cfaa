package io.github.limiter.algorithm;

/**
 * The rate limiting algorithms. Each is one class in this package (pure logic, the time passed in) and one Lua script
 * for Redis, with the same semantics on every backend, and describes itself here: the code that names its state's
 * shape in Redis keys and script arguments, its Lua file, and whether its state drains continuously. Adding an
 * algorithm is a constant here, its class and its Lua file.
 */
public enum Algorithm {

	/** N per window; windows aligned to the epoch or to calendar boundaries. See {@link FixedWindow}. */
	FIXED_WINDOW("fw", "fixed_window.lua", false),

	/** Exact: at most N in any interval of one window length. See {@link SlidingWindowLog}. */
	SLIDING_WINDOW_LOG("sl", "sliding_window_log.lua", false),

	/** O(1) approximation of a sliding window from two fixed windows. See {@link SlidingWindowCounter}. */
	SLIDING_WINDOW_COUNTER("sc", "sliding_window_counter.lua", false),

	/** Capacity and refill rate; bursts up to capacity. See {@link TokenBucket}. */
	TOKEN_BUCKET("gc", "gcra.lua", true),

	/** nginx {@code limit_req}: rate and burst, excess rejected, queued or served at once. See {@link LeakyBucket}. */
	LEAKY_BUCKET("gc", "gcra.lua", true);

	private final String code;

	private final String script;

	private final boolean continuous;

	Algorithm(String code, String script, boolean continuous) {
		this.code = code;
		this.script = script;
		this.continuous = continuous;
	}

	/**
	 * The code of the state's shape: in Redis keys ({@code <prefix>{<tag>}<code>:<limit>:<key>}), so that a limit
	 * switched to another shape starts afresh, and first of the script arguments, where it picks the Lua functions.
	 * Algorithms that share a state (token and leaky bucket, both GCRA) share their code.
	 * @return two letters
	 */
	public String code() {
		return this.code;
	}

	/**
	 * The Lua file, under {@code META-INF/limiter/lua}, that implements this algorithm for Redis.
	 * @return the file name
	 */
	public String script() {
		return this.script;
	}

	/**
	 * Whether the state drains continuously at the limit's rate (GCRA: token and leaky buckets), so that a call
	 * counted from a time older than the present by {@code d} costs the limit at most the rate times {@code d}. The
	 * counts of windows and logs end all at once (a window's at its boundary, a log's entries a window after each
	 * call): counted from an older time, a whole window's permits could come back early. The local backend decides
	 * only continuous limits on a clock's recent reading ({@link io.github.limiter.TimeSource#ticks()}).
	 * @return true for token and leaky buckets
	 */
	public boolean continuous() {
		return this.continuous;
	}

}
