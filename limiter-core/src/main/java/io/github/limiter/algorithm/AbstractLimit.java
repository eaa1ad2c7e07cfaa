package io.github.limiter.algorithm;

import java.time.Duration;
import java.util.Objects;

import io.github.limiter.DurationText;
import io.github.limiter.Decision;
import io.github.limiter.Limit;

/**
 * Base class of the algorithms: the name, the scope and the pure decision logic over an immutable state.
 *
 * <p>The logic is a function of (state, now, cost): no clock, no storage, no locking. The local backend runs it
 * directly; the Redis backends run the algorithm's Lua script, which implements the same function.
 *
 * @param <S> the immutable state kept per key ({@code null} means "never used or expired")
 */
public abstract class AbstractLimit<S> implements Limit {

	/** Longest window or period accepted, so that microsecond arithmetic never overflows. */
	static final Duration MAX_DURATION = Duration.ofDays(3660);

	private final String name;

	private final Scope scope;

	/** The hash of the limit's value, computed on first use (0 until then). */
	private int hash;

	AbstractLimit(String name, Scope scope) {
		this.name = validateName(name);
		this.scope = Objects.requireNonNull(scope, "scope must not be null");
	}

	@Override
	public final String name() {
		return this.name;
	}

	@Override
	public final Scope scope() {
		return this.scope;
	}

	/** The end of a description: the scope, when it is not the usual shared one (two such limits are not equal). */
	final String scopeText() {
		return (this.scope == Scope.SHARED) ? "" : ", " + this.scope.name().toLowerCase(java.util.Locale.ROOT).replace('_', ' ');
	}

	/**
	 * The values that define this limit besides its name and scope, in a fixed order (nulls allowed): limits of one
	 * class with the same name, scope and definition are equal, and share everything keyed by a limit.
	 * @return the values
	 */
	abstract java.util.List<Object> definition();

	/**
	 * Limits are values: equal when of the same algorithm class with the same name, scope and parameters, however
	 * and whenever they were built, so that a limit built for each call finds what an equal one left in maps keyed by
	 * limits (a coalescing lane, a remembered rejection, a local share during an outage).
	 */
	@Override
	public final boolean equals(Object other) {
		if (this == other) {
			return true;
		}
		return other != null && other.getClass() == getClass() && hashCode() == other.hashCode()
				&& this.name.equals(((AbstractLimit<?>) other).name) && this.scope == ((AbstractLimit<?>) other).scope
				&& definition().equals(((AbstractLimit<?>) other).definition());
	}

	@Override
	public final int hashCode() {
		int hash = this.hash;
		if (hash == 0) {
			hash = Objects.hash(getClass().getName(), this.name, this.scope, definition());
			this.hash = (hash != 0) ? hash : 1;
		}
		return this.hash;
	}

	/**
	 * Decides a call of the given cost without changing anything.
	 * @param state the stored state, or {@code null}
	 * @param nowMicros the current time
	 * @param cost permits the call takes (0 to only read the state)
	 * @return the outcome, with the state to store if the call is admitted
	 */
	public abstract Outcome<S> evaluate(S state, long nowMicros, long cost);

	/**
	 * Consumes the cost whatever the outcome, saturating at the limit.
	 * @param state the stored state, or {@code null}
	 * @param nowMicros the current time
	 * @param cost permits to record
	 * @return the new state
	 */
	public abstract S record(S state, long nowMicros, long cost);

	/**
	 * Gives back what an admitted call of the given cost took, as far as the state still holds it: a window only while
	 * it is the window charged (a sliding counter's also once it is the previous one), a log the entries of that
	 * instant, a bucket the cost's time. Never leaves more room than if the call had not come. The same as the
	 * {@code refund} of the algorithm's Lua file.
	 * @param state the stored state, or {@code null}
	 * @param nowMicros the current time
	 * @param cost the permits the call took
	 * @param charged the decision that admitted it, on this limit: its time and its token (what {@link #token} named
	 * the call's permits; {@code null} for algorithms that count permits rather than keep them one by one)
	 * @return the new state (the same when there is nothing to give back)
	 */
	public abstract S refund(S state, long nowMicros, long cost, Decision charged);

	/**
	 * Names the permits an admitted call has just added to the state, so that its refund takes back those and no
	 * other call's: a sliding log keeps each permit; the other algorithms count them, and need no name.
	 * @param admitted the state after the call
	 * @param cost the permits the call took
	 * @return the token, or {@code null}
	 */
	public String token(S admitted, long cost) {
		return null;
	}

	/**
	 * Instant after which the state is equivalent to no state at all and can be dropped.
	 * @param state a stored state
	 * @return microseconds since the epoch
	 */
	public abstract long expiresAtMicros(S state);

	/**
	 * Describes this limit to the Lua script: the code that picks its functions in the algorithm's Lua file, followed
	 * by the parameters that file documents, as many as it takes.
	 * @param clientNowMicros the caller's clock, used only to describe calendar windows around the present (the script
	 * reads the time from Redis and picks the window that contains it)
	 * @return the code, then the parameters, as decimal integers; an immutable list, built once for limits that do not
	 * depend on the clock
	 */
	public abstract java.util.List<String> scriptParameters(long clientNowMicros);

	/**
	 * This limit shared out among instances: the same algorithm and window with a capacity and rate divided by
	 * {@code instances} (at least one permit). Used to size a local fallback limit while the shared backend is away.
	 * @param instances the expected number of application instances, at least 1
	 * @return the per-instance share of this limit
	 */
	public abstract AbstractLimit<S> dividedBy(int instances);

	/**
	 * Whether shares of this limit among {@code instances} admit together at most what the limit admits: a count per
	 * window needs at least one permit per instance (three instances cannot share one message a day). A bucket
	 * overrides this: its rate divides exactly at any count, and each share keeps a burst of at least one permit.
	 * @param instances the number of instances, at least 1
	 * @return whether {@link #dividedBy} gives a share that holds the limit
	 */
	public boolean divisibleAmong(int instances) {
		return capacity() >= checkInstances(instances);
	}

	static long share(long value, int instances) {
		return Math.max(1, value / checkInstances(instances));
	}

	static int checkInstances(int instances) {
		if (instances < 1) {
			throw new IllegalArgumentException("instances must be at least 1 but was " + instances);
		}
		return instances;
	}

	/** Longest name accepted: a name is part of every Redis key, metric tag and header of its limit. */
	public static final int MAX_NAME_LENGTH = 256;

	static String validateName(String name) {
		if (name == null || name.isBlank()) {
			throw new IllegalArgumentException("name must not be empty but was '" + name + "'");
		}
		if (name.length() > MAX_NAME_LENGTH) {
			throw new IllegalArgumentException("name must be at most " + MAX_NAME_LENGTH + " characters long but was "
					+ name.length() + " ('" + name.substring(0, 32) + "...')");
		}
		for (int i = 0; i < name.length(); i++) {
			char c = name.charAt(i);
			if (c == '{' || c == '}' || Character.isISOControl(c) || Character.isWhitespace(c)) {
				throw new IllegalArgumentException(
						"name must not contain braces, whitespace or control characters but was '" + name + "'");
			}
			// A lone surrogate has no UTF-8 form: names that differ only there would share their Redis keys.
			if (Character.isHighSurrogate(c) && i + 1 < name.length() && Character.isLowSurrogate(name.charAt(i + 1))) {
				i++;
			}
			else if (Character.isSurrogate(c)) {
				throw new IllegalArgumentException("name must be well-formed text but has a lone surrogate \\u"
						+ Integer.toHexString(c).toUpperCase(java.util.Locale.ROOT) + " at index " + i);
			}
		}
		return name;
	}

	/**
	 * Largest count a limit may have: 10^15, so that every count and time stays an exact integer in the doubles of
	 * Redis Lua.
	 */
	public static final long MAX_PERMITS = 1_000_000_000_000_000L;

	/**
	 * A parameter of this limit is invalid: the error names the limit, by algorithm and name, then the problem.
	 * @param problem what is wrong, naming the parameter and its value
	 * @return the exception to throw
	 */
	final IllegalArgumentException invalid(String problem) {
		return new IllegalArgumentException(
				algorithm().name().toLowerCase(java.util.Locale.ROOT).replace('_', ' ') + " '" + this.name + "': " + problem);
	}

	/**
	 * Builds a bucket's arithmetic, whose own checks do not know the limit: their errors then name it.
	 * @param build builds it
	 * @return the arithmetic
	 */
	final Gcra gcra(java.util.function.Supplier<Gcra> build) {
		try {
			return build.get();
		}
		catch (IllegalArgumentException ex) {
			throw invalid(ex.getMessage());
		}
	}

	final long positive(String field, long value) {
		if (value <= 0) {
			throw invalid(field + " must be positive but was " + value);
		}
		if (value > MAX_PERMITS) {
			throw invalid(field + " must be at most " + MAX_PERMITS + " but was " + value);
		}
		return value;
	}

	final long micros(String field, Duration duration) {
		if (duration == null) {
			throw invalid(field + " must be set");
		}
		if (duration.isNegative() || duration.isZero()) {
			throw invalid(field + " must be positive but was " + DurationText.of(duration));
		}
		if (duration.compareTo(MAX_DURATION) > 0) {
			throw invalid(field + " must be at most " + MAX_DURATION.toDays() + " days but was " + DurationText.of(duration));
		}
		long micros = duration.toNanos() / 1_000;
		if (micros == 0) {
			throw invalid(field + " must be at least one microsecond but was " + DurationText.of(duration));
		}
		if (duration.getNano() % 1_000 != 0) {
			// Dropping the rest would enforce another rate than the one asked for (1.5 us read as 1 us: 50% more).
			throw invalid(field + " must be whole microseconds but was " + DurationText.of(duration));
		}
		return micros;
	}

	static long ceil(double micros) {
		return (long) Math.ceil(micros);
	}

}
