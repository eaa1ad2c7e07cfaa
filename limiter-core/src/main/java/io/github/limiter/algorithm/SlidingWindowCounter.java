package io.github.limiter.algorithm;

import io.github.limiter.Decision;

import java.time.Duration;
import java.util.List;

/**
 * Sliding window counter: an O(1) approximation of a sliding window.
 *
 * <p>Keeps the counts of the current and the previous epoch-aligned window and assumes the previous window's calls
 * were spread evenly: a call at {@code elapsed} into the current window sees
 * {@code previous × (window − elapsed) / window + current} permits in use. It never admits more than the limit in
 * one window and smooths the 2× boundary burst of {@link FixedWindow}, for the memory of two counters whatever the
 * limit. Use {@link SlidingWindowLog} when the bound must be exact.
 *
 * <p>State: window start and two counts in one string, about 100 bytes in Redis. Script:
 * {@code sliding_window_counter.lua}.
 */
public final class SlidingWindowCounter extends AbstractLimit<SlidingWindowCounter.State> {

	private volatile List<String> parameters;

	private final long limit;

	private final long windowMicros;

	private SlidingWindowCounter(String name, long limit, Duration window, Scope scope) {
		super(name, scope);
		this.limit = positive("limit", limit);
		this.windowMicros = micros("window", window);
	}

	/**
	 * A limit of about {@code limit} permits in any window of the given length.
	 * @param name the limit's name
	 * @param limit permits per window
	 * @param window the window length
	 * @return the limit
	 */
	public static SlidingWindowCounter of(String name, long limit, Duration window) {
		return new SlidingWindowCounter(name, limit, window, Scope.SHARED);
	}

	/**
	 * The same limit with another scope.
	 * @param scope the scope
	 * @return a new limit
	 */
	public SlidingWindowCounter withScope(Scope scope) {
		return new SlidingWindowCounter(name(), this.limit, Duration.ofNanos(this.windowMicros * 1000), scope);
	}

	@Override
	public SlidingWindowCounter dividedBy(int instances) {
		return new SlidingWindowCounter(name(), share(this.limit, instances), Duration.ofNanos(this.windowMicros * 1000),
				scope());
	}

	@Override
	public Algorithm algorithm() {
		return Algorithm.SLIDING_WINDOW_COUNTER;
	}

	@Override
	public long capacity() {
		return this.limit;
	}

	@Override
	public Duration window() {
		return Duration.ofNanos(this.windowMicros * 1000);
	}

	@Override
	public Duration retention() {
		return Duration.ofNanos(2 * this.windowMicros * 1000);
	}

	@Override
	public Outcome<State> evaluate(State state, long now, long cost) {
		now = notBefore(state, now);
		long start = Math.floorDiv(now, this.windowMicros) * this.windowMicros;
		long elapsed = now - start;
		State counts = counts(state, start);
		long current = counts.current;
		long previous = counts.previous;
		double weighted = previous * (double) (this.windowMicros - elapsed) / this.windowMicros;
		boolean allowed = weighted + current + cost <= this.limit;
		long after = allowed ? current + cost : current;
		long remaining = (long) Math.floor(this.limit - weighted - after);
		long retryAfter = 0;
		if (!allowed && cost > this.limit) {
			// Never fits; a retry of a call that does can come once this window's count has faded.
			retryAfter = start + 2 * this.windowMicros - now;
		}
		else if (!allowed) {
			if (current + cost > this.limit) {
				// Not before the next window, and then not before this window's count has faded enough.
				long fade = ceil(this.windowMicros - this.windowMicros * (double) (this.limit - cost) / current);
				retryAfter = start + this.windowMicros - now + Math.max(0, fade);
			}
			else {
				long fade = ceil(this.windowMicros - this.windowMicros * (double) (this.limit - cost - current) / previous);
				retryAfter = Math.max(1, fade - elapsed);
			}
		}
		long resetAfter = (after > 0) ? start + 2 * this.windowMicros - now
				: (previous > 0) ? start + this.windowMicros - now : 0;
		return new Outcome<>(allowed, remaining, retryAfter, resetAfter, 0,
				allowed ? new State(start, after, previous) : state);
	}

	@Override
	public State record(State state, long now, long cost) {
		now = notBefore(state, now);
		long start = Math.floorDiv(now, this.windowMicros) * this.windowMicros;
		State counts = counts(state, start);
		return new State(start, Math.min(this.limit, counts.current + cost), counts.previous);
	}

	@Override
	public State refund(State state, long now, long cost, Decision charged) {
		long window = Math.floorDiv(charged.timeMicros(), this.windowMicros) * this.windowMicros;
		if (state != null && state.start == window) {
			return new State(state.start, Math.max(0, state.current - cost), state.previous);
		}
		if (state != null && state.start == window + this.windowMicros) {
			return new State(state.start, state.current, Math.max(0, state.previous - cost));
		}
		return state;
	}

	/**
	 * A clock that went back behind the stored window decides as at that window's start (its previous window then
	 * weighs in full): a window started afresh over the newer one's count would admit its permits twice.
	 */
	private static long notBefore(State state, long now) {
		return (state != null && now < state.start) ? state.start : now;
	}

	/** The counts as seen from the window starting at {@code start}: a stored window may be this one or the last. */
	private State counts(State state, long start) {
		if (state != null && state.start == start) {
			return state;
		}
		if (state != null && state.start == start - this.windowMicros) {
			return new State(start, 0, state.current);
		}
		return new State(start, 0, 0);
	}

	@Override
	public long expiresAtMicros(State state) {
		return state.start + 2 * this.windowMicros;
	}

	@Override
	public List<String> scriptParameters(long clientNowMicros) {
		if (this.parameters == null) {
			// Built once: the hot path of every Redis decision reads it.
			this.parameters = List.of(algorithm().code(), Long.toString(this.limit), Long.toString(this.windowMicros));
		}
		return this.parameters;
	}

	@Override
	List<Object> definition() {
		return List.of(this.limit, this.windowMicros);
	}

	@Override
	public String toString() {
		return "SlidingWindowCounter[" + name() + ": " + this.limit + " per " + Duration.ofNanos(this.windowMicros * 1000) + scopeText() + "]";
	}

	/**
	 * Counts of the current and previous windows.
	 *
	 * @param start start of the current window, microseconds since the epoch
	 * @param current permits consumed in the current window
	 * @param previous permits consumed in the window before
	 */
	public record State(long start, long current, long previous) {

	}

}
