package io.github.limiter.algorithm;

import io.github.limiter.Decision;

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
 * <p>Every admitted permit is unique to the call (the decision's {@code token}), even when two calls arrive in the same
 * microsecond, so that a refund takes back the call's own permits and no other's: in Redis a sorted-set member, here
 * a serial number kept next to each time. Script: {@code sliding_window_log.lua}.
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
			throw invalid("limit must be at most 1000000 (one stored entry per permit) but was "
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
		State log = live(state, now);
		long[] times = log.times;
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
		State next = allowed ? add(log, now, cost, false) : log;
		long after = next.times.length;
		// An admitted call is the newest permit; otherwise the newest stored permit decides when the log is empty.
		long resetAfter = (after == 0) ? 0
				: (allowed && cost > 0) ? this.windowMicros : times[times.length - 1] + this.windowMicros - now;
		return new Outcome<>(allowed, this.limit - after, retryAfter, resetAfter, 0, allowed ? next : state);
	}

	@Override
	public State record(State state, long now, long cost) {
		// Saturating at the limit keeps the newest entries: recorded ones go after the admitted calls' entries of the
		// same time, so that those are dropped first and a refund cannot free them again (as in Lua).
		State next = add(live(state, now), now, cost, true);
		int length = next.times.length;
		if (length > this.limit) {
			int from = length - (int) this.limit;
			next = new State(Arrays.copyOfRange(next.times, from, length), Arrays.copyOfRange(next.serials, from, length),
					next.nextSerial);
		}
		return next;
	}

	/** Removes the call's own entries, those its token names, wherever they are; none when they have gone. */
	@Override
	public State refund(State state, long now, long cost, Decision charged) {
		long first = serial(charged.token());
		if (state == null || first < 0) {
			return state;
		}
		long end = first + cost;
		int kept = 0;
		long[] times = new long[state.times.length];
		long[] serials = new long[state.times.length];
		for (int i = 0; i < state.times.length; i++) {
			if (state.serials[i] < first || state.serials[i] >= end) {
				times[kept] = state.times[i];
				serials[kept++] = state.serials[i];
			}
		}
		if (kept == state.times.length) {
			return state;
		}
		return new State(Arrays.copyOf(times, kept), Arrays.copyOf(serials, kept), state.nextSerial);
	}

	/** The serial of the first permit of the admitted call: its entries are that one and the {@code cost - 1} after. */
	@Override
	public String token(State admitted, long cost) {
		return Long.toString(admitted.nextSerial - cost);
	}

	private static long serial(String token) {
		if (token == null) {
			return -1;
		}
		try {
			return Long.parseLong(token);
		}
		catch (NumberFormatException ex) {
			// Another backend's token: none of these entries.
			return -1;
		}
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

	private State live(State state, long now) {
		if (state == null) {
			return EMPTY;
		}
		long[] times = state.times;
		long horizon = now - this.windowMicros;
		int first = 0;
		while (first < times.length && times[first] <= horizon) {
			first++;
		}
		return (first == 0) ? state : new State(Arrays.copyOfRange(times, first, times.length),
				Arrays.copyOfRange(state.serials, first, times.length), state.nextSerial);
	}

	/** The log with {@code cost} entries at {@code now}, numbered with consecutive serials. */
	private static State add(State log, long now, long cost, boolean recorded) {
		long[] times = log.times;
		int n = (int) cost;
		long[] next = Arrays.copyOf(times, times.length + n);
		long[] serials = Arrays.copyOf(log.serials, times.length + n);
		int at = times.length;
		// Keep the log sorted even if the clock stepped back.
		while (at > 0 && (next[at - 1] > now || (!recorded && next[at - 1] == now && log.serials[at - 1] < 0))) {
			at--;
		}
		System.arraycopy(times, at, next, at + n, times.length - at);
		System.arraycopy(log.serials, at, serials, at + n, times.length - at);
		Arrays.fill(next, at, at + n, now);
		long first = SERIALS.getAndAdd(n);
		for (int i = 0; i < n; i++) {
			// Recorded entries are nobody's to refund, and sort after admitted ones of their time, as '~' in Lua.
			serials[at + i] = recorded ? -1 : first + i;
		}
		return new State(next, serials, first + n);
	}

	private static final State EMPTY = new State(new long[0], new long[0], 0);

	/**
	 * Serial numbers for permits, unique in this JVM: a key reset, or evicted, and used again never gives a permit the
	 * number of one an earlier call still holds a token for.
	 */
	private static final java.util.concurrent.atomic.AtomicLong SERIALS = new java.util.concurrent.atomic.AtomicLong();

	@Override
	List<Object> definition() {
		return List.of(this.limit, this.windowMicros);
	}

	@Override
	public String toString() {
		return "SlidingWindowLog[" + name() + ": " + this.limit + " per " + retention() + scopeText() + "]";
	}

	/**
	 * The permits in the log, oldest first: each one's time, and its serial number, unique in the key's log.
	 *
	 * @param times microseconds since the epoch, sorted
	 * @param serials the serial of each permit, unique in this JVM: a call's permits have consecutive serials
	 * @param nextSerial one past the serial of the last permit added
	 */
	public record State(long[] times, long[] serials, long nextSerial) {

		/** Equal when they hold the same permits: compared by the arrays' contents, as a value should be. */
		@Override
		public boolean equals(Object other) {
			return other instanceof State that && this.nextSerial == that.nextSerial
					&& java.util.Arrays.equals(this.times, that.times) && java.util.Arrays.equals(this.serials, that.serials);
		}

		@Override
		public int hashCode() {
			return (java.util.Arrays.hashCode(this.times) * 31 + java.util.Arrays.hashCode(this.serials)) * 31
					+ Long.hashCode(this.nextSerial);
		}

		@Override
		public String toString() {
			return "State[" + this.times.length + " permits, times " + java.util.Arrays.toString(this.times)
					+ ", next serial " + this.nextSerial + "]";
		}

	}

}
