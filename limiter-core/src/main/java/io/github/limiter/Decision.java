package io.github.limiter;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.time.Duration;
import java.util.List;
import java.util.Objects;

/**
 * The answer of a rate limiter for one call: admitted or not, and everything an HTTP response needs to say about it.
 *
 * <p>A decision over several limits ({@link #parts()} non-empty) is allowed only when every part is; its other
 * figures are those of the binding part: the rejecting part that asks for the longest wait, or, when all admit, the
 * part with the fewest remaining permits.
 *
 * <p>Times are relative to {@link #timeMicros()}, the instant the backend decided (for the Redis backends, the Redis
 * server's clock).
 */
public final class Decision {

	private final String limitName;

	private final boolean allowed;

	private final long limit;

	private final long remaining;

	private final long retryAfterMicros;

	private final long resetAfterMicros;

	private final long delayMicros;

	private final long timeMicros;

	private final String token;

	private final List<Decision> parts;

	private final Origin origin;

	/** Whether the permits of this decision were given back: a decision gives them back once. */
	private volatile boolean givenBack;

	private static final VarHandle GIVEN_BACK;

	static {
		try {
			GIVEN_BACK = MethodHandles.lookup().findVarHandle(Decision.class, "givenBack", boolean.class);
		}
		catch (ReflectiveOperationException ex) {
			throw new ExceptionInInitializerError(ex);
		}
	}

	private Decision(String limitName, boolean allowed, long limit, long remaining, long retryAfterMicros,
			long resetAfterMicros, long delayMicros, long timeMicros, String token, List<Decision> parts, Origin origin) {
		this.limitName = limitName;
		this.allowed = allowed;
		this.limit = limit;
		this.remaining = remaining;
		this.retryAfterMicros = retryAfterMicros;
		this.resetAfterMicros = resetAfterMicros;
		this.delayMicros = delayMicros;
		this.timeMicros = timeMicros;
		this.token = token;
		this.parts = parts;
		this.origin = origin;
	}

	/**
	 * Creates the decision of one limit. Backends call this; applications receive decisions.
	 * @param limitName name of the limit
	 * @param allowed whether the call is admitted
	 * @param limit the limit's capacity
	 * @param remaining permits left after this decision, never negative
	 * @param retryAfterMicros when rejected, time until a retry of the same cost can succeed; 0 when allowed
	 * @param resetAfterMicros time until the limit is back to its full capacity if no other call arrives
	 * @param delayMicros when allowed by a queueing leaky bucket, time the caller must wait before proceeding
	 * @param timeMicros instant of the decision, microseconds since the epoch
	 * @param token the sliding-log member stored for this call, or {@code null}
	 * @return the decision
	 */
	public static Decision of(String limitName, boolean allowed, long limit, long remaining, long retryAfterMicros,
			long resetAfterMicros, long delayMicros, long timeMicros, String token) {
		return new Decision(limitName, allowed, limit, Math.max(0, remaining), Math.max(0, retryAfterMicros),
				Math.max(0, resetAfterMicros), Math.max(0, delayMicros), timeMicros, token, List.of(), Origin.BACKEND);
	}

	/**
	 * Combines the decisions of several limits taken as one all-or-nothing decision.
	 * @param parts the decisions, in the order of the requests
	 * @return the combined decision, or the only part when there is one
	 */
	public static Decision combine(List<Decision> parts) {
		if (parts.isEmpty()) {
			throw new IllegalArgumentException("a decision needs at least one part");
		}
		if (parts.size() == 1) {
			return parts.get(0);
		}
		boolean allowed = true;
		long retryAfter = 0;
		long delay = 0;
		long time = Long.MIN_VALUE;
		Decision binding = null;
		for (Decision part : parts) {
			allowed &= part.allowed;
			retryAfter = Math.max(retryAfter, part.retryAfterMicros);
			delay = Math.max(delay, part.delayMicros);
			time = Math.max(time, part.timeMicros);
			if (binding == null || binds(part, binding)) {
				binding = part;
			}
		}
		// A failure policy's part makes the whole a policy's decision; a remembered part, a remembered one.
		Origin origin = Origin.BACKEND;
		for (Decision part : parts) {
			if (!part.origin.byBackend() || origin == Origin.BACKEND) {
				origin = part.origin;
			}
		}
		return new Decision(binding.limitName, allowed, binding.limit, binding.remaining, allowed ? 0 : retryAfter,
				binding.resetAfterMicros, allowed ? delay : 0, time, null, List.copyOf(parts), origin);
	}

	private static boolean binds(Decision candidate, Decision current) {
		if (candidate.allowed != current.allowed) {
			return !candidate.allowed;
		}
		if (!candidate.allowed) {
			return candidate.retryAfterMicros > current.retryAfterMicros;
		}
		if (candidate.remaining != current.remaining) {
			return candidate.remaining < current.remaining;
		}
		return candidate.resetAfterMicros > current.resetAfterMicros;
	}

	/**
	 * The same decision, made by another means than the backend (a failure policy).
	 * @param origin who decided
	 * @return a new decision
	 */
	public Decision withOrigin(Origin origin) {
		// A single limit's decision (a remembered rejection on every hit of the denial cache) has no parts to copy.
		List<Decision> parts = this.parts.isEmpty() ? this.parts
				: this.parts.stream().map(part -> part.withOrigin(origin)).toList();
		return new Decision(this.limitName, this.allowed, this.limit, this.remaining, this.retryAfterMicros,
				this.resetAfterMicros, this.delayMicros, this.timeMicros, this.token, parts, origin);
	}

	/**
	 * Claims this decision's permits for a refund: the first claim wins, so that refunding a decision twice (a retry,
	 * a second code path) gives its permits back once.
	 * @return {@code true} for the first claim
	 */
	boolean claimRefund() {
		return GIVEN_BACK.compareAndSet(this, false, true);
	}

	/**
	 * Who made this decision: the backend, or a failure policy while the backend was unavailable.
	 * @return the origin
	 */
	public Origin origin() {
		return this.origin;
	}

	/**
	 * Name of the limit this decision is about (the binding limit of a combined decision).
	 * @return the limit name
	 */
	public String limitName() {
		return this.limitName;
	}

	/**
	 * Whether the call is admitted.
	 * @return {@code true} when admitted
	 */
	public boolean allowed() {
		return this.allowed;
	}

	/**
	 * Capacity of the (binding) limit.
	 * @return the limit
	 */
	public long limit() {
		return this.limit;
	}

	/**
	 * Permits left after this decision (after the call it admitted; for a {@link Operation#CHECK}, after the call it
	 * would admit).
	 * @return a number between 0 and {@link #limit()}
	 */
	public long remaining() {
		return this.remaining;
	}

	/**
	 * When rejected, how long until a retry with the same cost can succeed (if nobody else consumes in between).
	 * @return zero when allowed
	 */
	public Duration retryAfter() {
		return Duration.ofNanos(this.retryAfterMicros * 1_000L);
	}

	/**
	 * Same as {@link #retryAfter()}, in microseconds.
	 * @return zero when allowed
	 */
	public long retryAfterMicros() {
		return this.retryAfterMicros;
	}

	/**
	 * How long until the limit has its full capacity again, if no other call arrives (for a {@link Operation#CHECK},
	 * after the call it would admit).
	 * @return zero when the limit is full after this decision
	 */
	public Duration resetAfter() {
		return Duration.ofNanos(this.resetAfterMicros * 1_000L);
	}

	/**
	 * Same as {@link #resetAfter()}, in microseconds.
	 * @return zero when the limit is full after this decision
	 */
	public long resetAfterMicros() {
		return this.resetAfterMicros;
	}

	/**
	 * How long an admitted caller must wait before proceeding: non-zero only for a leaky bucket that queues (nginx
	 * {@code limit_req} with {@code burst} and without {@code nodelay}).
	 * @return zero unless the call was admitted into a queue
	 */
	public Duration delay() {
		return Duration.ofNanos(this.delayMicros * 1_000L);
	}

	/**
	 * Same as {@link #delay()}, in microseconds.
	 * @return zero unless the call was admitted into a queue
	 */
	public long delayMicros() {
		return this.delayMicros;
	}

	/**
	 * Instant of the decision by the backend's clock.
	 * @return microseconds since the epoch
	 */
	public long timeMicros() {
		return this.timeMicros;
	}

	/**
	 * The unique member a sliding-window log stored for this admitted call (the "token" of a sorted-set limiter), or
	 * {@code null} for other algorithms and rejected calls.
	 * @return the token or {@code null}
	 */
	public String token() {
		return this.token;
	}

	/**
	 * The decisions of each limit of a multi-limit decision, in request order; empty for a single limit.
	 * @return the parts
	 */
	public List<Decision> parts() {
		return this.parts;
	}

	@Override
	public boolean equals(Object other) {
		if (this == other) {
			return true;
		}
		if (!(other instanceof Decision that)) {
			return false;
		}
		return this.allowed == that.allowed && this.limit == that.limit && this.remaining == that.remaining
				&& this.retryAfterMicros == that.retryAfterMicros && this.resetAfterMicros == that.resetAfterMicros
				&& this.delayMicros == that.delayMicros && this.timeMicros == that.timeMicros
				&& this.limitName.equals(that.limitName) && Objects.equals(this.token, that.token)
				&& this.parts.equals(that.parts) && this.origin == that.origin;
	}

	@Override
	public int hashCode() {
		return Objects.hash(this.limitName, this.allowed, this.remaining, this.timeMicros);
	}

	@Override
	public String toString() {
		return "Decision[" + this.limitName + (this.allowed ? " allowed" : " rejected")
				+ ((this.origin != Origin.BACKEND) ? " by " + this.origin : "") + ", limit=" + this.limit
				+ ", remaining=" + this.remaining + ", retryAfter=" + this.retryAfterMicros + "us, resetAfter="
				+ this.resetAfterMicros + "us, delay=" + this.delayMicros + "us"
				+ (this.parts.isEmpty() ? "" : ", parts=" + this.parts) + "]";
	}

	/**
	 * Who made a decision.
	 */
	public enum Origin {

		/** The backend, normally. */
		BACKEND,

		/**
		 * A rejection the backend gave this JVM for the same limit, key and cost, answered again without asking it
		 * until its retry time (the Redis backends' denial cache): the backend's verdict, not a failure policy's.
		 */
		REMEMBERED,

		/** The backend could not answer in time; the failure policy admitted the call. */
		FAIL_OPEN,

		/** The backend could not answer in time; the failure policy rejected the call. */
		FAIL_CLOSED,

		/** The backend is down (its circuit is open); a local per-instance share of the limit decided. */
		LOCAL_FALLBACK,

		/**
		 * The backend did not answer this call in time but is not known to be down (its circuit is closed), and the
		 * policy is {@code LOCAL}: the call is rejected, since a local share admitting it while the backend is only
		 * slow would exceed the shared limit.
		 */
		UNDECIDED;

		/**
		 * Whether the backend's verdict stands behind the decision (it decided now, or gave the rejection this one
		 * repeats), rather than a failure policy's.
		 * @return {@code true} for {@link #BACKEND} and {@link #REMEMBERED}
		 */
		public boolean byBackend() {
			return this == BACKEND || this == REMEMBERED;
		}

	}

}
