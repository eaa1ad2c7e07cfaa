package io.github.limiter.algorithm;

import java.time.Duration;
import java.util.List;
import java.util.Arrays;

/**
 * Sliding window log: at most {@code limit} permits in any interval of one window length, exactly.
 *
 * <p>Every admitted permit is stored with its time; a call is admitted when the permits of the last window plus its
 * cost fit in the limit. The window is {@code (now - window, now]}. Memory per key is bounded by the limit (one entry
 * per permit, about 50 bytes each in a Redis sorted set), so prefer {@link SlidingWindowCounter} for large limits.
 *
 * <p>In Redis every admitted permit is a sorted-set member unique to the call (the decision's {@code token}), even
 * when two calls arrive in the same microsecond. Script: {@code sliding_window_log.lua}.
 */
public final class SlidingWindowLog extends AbstractLimit<SlidingWindowLog.State> {

	private volatile List<String> parameters;

	private final long limit;

	private final long windowMicros;

	private SlidingWindowLog(String name, long limit, Duration window, Scope scope) {
		super(name, scope);
		this.limit = positive("limit", limit);
		this.windowMicros = micros("window", window);
		if (limit > 1_000_000) {
			throw new IllegalArgumentException("limit of a sliding window log must be at most 1000000 (one stored entry per permit) but was "
					+ limit + "; use a sliding window counter for large limits");
		}
	}

	/**
	 * A limit of {@code limit} permits in any window of the given length.
	 * @param name the limit's name
	 * @param limit permits per window, at most one million
	 * @param window the window length
	 * @return the limit
	 */
	public static SlidingWindowLog of(String name, long limit, Duration window) {
		return new SlidingWindowLog(name, limit, window, Scope.SHARED);
	}

	/**
	 * The same limit with another scope.
	 * @param scope the scope
	 * @return a new limit
	 */
	public SlidingWindowLog withScope(Scope scope) {
		return new SlidingWindowLog(name(), this.limit, retention(), scope);
	}

	@Override
	public SlidingWindowLog dividedBy(int instances) {
		return new SlidingWindowLog(name(), share(this.limit, instances), retention(), scope());
	}

	@Override
	public Algorithm algorithm() {
		return Algorithm.SLIDING_WINDOW_LOG;
	}

	@Override
	public long capacity() {
		return this.limit;
	}

	@Override
	public Duration window() {
		return retention();
	}

	@Override
	public Duration retention() {
		return Duration.ofNanos(this.windowMicros * 1000);
	}

	@Override
	public Outcome<State> evaluate(State state, long now, long cost) {
		long[] times = live(state, now);
		int count = times.length;
		boolean allowed = count + cost <= this.limit;
		long retryAfter = 0;
		if (!allowed && cost > this.limit) {
			// Never fits; a retry of a call that does can come once the whole window has passed.
			retryAfter = this.windowMicros;
		}
		else if (!allowed) {
			// The call fits once the (count + cost - limit) oldest permits have left the window.
			long oldestToLeave = times[(int) (count + cost - this.limit) - 1];
			retryAfter = oldestToLeave + this.windowMicros - now;
		}
		long[] next = allowed ? add(times, now, cost) : times;
		long after = next.length;
		// An admitted call is the newest permit; otherwise the newest stored permit decides when the log is empty.
		long resetAfter = (after == 0) ? 0
				: (allowed && cost > 0) ? this.windowMicros : times[times.length - 1] + this.windowMicros - now;
		return new Outcome<>(allowed, this.limit - after, retryAfter, resetAfter, 0, allowed ? new State(next) : state);
	}

	@Override
	public State record(State state, long now, long cost) {
		long[] next = add(live(state, now), now, cost);
		if (next.length > this.limit) {
			next = Arrays.copyOfRange(next, next.length - (int) this.limit, next.length);
		}
		return new State(next);
	}

	/** Removes up to {@code cost} entries of the instant charged, the newest first: those are the call's. */
	@Override
	public State refund(State state, long now, long cost, long chargedAt) {
		if (state == null) {
			return null;
		}
		long[] times = state.times;
		int last = times.length - 1;
		while (last >= 0 && times[last] > chargedAt) {
			last--;
		}
		int first = last;
		while (first >= 0 && times[first] == chargedAt && last - first < cost) {
			first--;
		}
		if (first == last) {
			return state;
		}
		long[] next = new long[times.length - (last - first)];
		System.arraycopy(times, 0, next, 0, first + 1);
		System.arraycopy(times, last + 1, next, first + 1, times.length - last - 1);
		return new State(next);
	}

	@Override
	public long expiresAtMicros(State state) {
		return (state.times.length == 0) ? Long.MIN_VALUE : state.times[state.times.length - 1] + this.windowMicros;
	}

	@Override
	public List<String> scriptParameters(long clientNowMicros) {
		if (this.parameters == null) {
			// Built once: the hot path of every Redis decision reads it.
			this.parameters = List.of(algorithm().code(), Long.toString(this.limit), Long.toString(this.windowMicros));
		}
		return this.parameters;
	}

	private long[] live(State state, long now) {
		if (state == null) {
			return new long[0];
		}
		long[] times = state.times;
		long horizon = now - this.windowMicros;
		int first = 0;
		while (first < times.length && times[first] <= horizon) {
			first++;
		}
		return (first == 0) ? times : Arrays.copyOfRange(times, first, times.length);
	}

	private static long[] add(long[] times, long now, long cost) {
		long[] next = Arrays.copyOf(times, times.length + (int) cost);
		int at = times.length;
		// Keep the log sorted even if the clock stepped back.
		while (at > 0 && next[at - 1] > now) {
			at--;
		}
		System.arraycopy(times, at, next, at + (int) cost, times.length - at);
		Arrays.fill(next, at, at + (int) cost, now);
		return next;
	}

	@Override
	List<Object> definition() {
		return List.of(this.limit, this.windowMicros);
	}

	@Override
	public String toString() {
		return "SlidingWindowLog[" + name() + ": " + this.limit + " per " + retention() + "]";
	}

	/**
	 * Times of the permits in the log, oldest first.
	 *
	 * @param times microseconds since the epoch, sorted
	 */
	public record State(long[] times) {

	}

}
