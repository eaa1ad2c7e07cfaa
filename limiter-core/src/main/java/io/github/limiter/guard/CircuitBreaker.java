package io.github.limiter.guard;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.LongSupplier;

/**
 * Stops calling a backend that keeps failing, so that callers do not pay the deadline on every call during an
 * outage.
 *
 * <p>Closed: calls go through; {@code failureThreshold} consecutive failures open it. Open: no call goes through for
 * {@code openDuration}. Then one probe call goes through (half-open): success closes the breaker, failure opens it
 * for another {@code openDuration}. Only one probe is in flight at a time, so a recovering backend is not flooded and
 * the breaker does not flap.
 */
public final class CircuitBreaker {

	private final int failureThreshold;

	private final long openNanos;

	private final LongSupplier nanoClock;

	private final AtomicReference<Status> status = new AtomicReference<>(new Status(State.CLOSED, 0, 0));

	/**
	 * Creates a breaker.
	 * @param failureThreshold consecutive failures that open it
	 * @param openDuration how long it stays open before a probe
	 * @param nanoClock a monotonic clock ({@code System::nanoTime})
	 */
	public CircuitBreaker(int failureThreshold, Duration openDuration, LongSupplier nanoClock) {
		if (failureThreshold < 1) {
			throw new IllegalArgumentException("failure threshold must be at least 1 but was " + failureThreshold);
		}
		if (openDuration.isNegative() || openDuration.isZero()) {
			throw new IllegalArgumentException("open duration must be positive but was " + openDuration);
		}
		this.failureThreshold = failureThreshold;
		this.openNanos = openDuration.toNanos();
		this.nanoClock = nanoClock;
	}

	/**
	 * Whether a call may go to the backend now. When the open period is over, exactly one caller gets {@code true}
	 * (the probe).
	 * @return {@code true} to call the backend
	 */
	public boolean tryAcquirePermission() {
		while (true) {
			Status current = this.status.get();
			switch (current.state) {
				case CLOSED:
					return true;
				case HALF_OPEN:
					return false;
				default:
					if (this.nanoClock.getAsLong() - current.openedAt < this.openNanos) {
						return false;
					}
					if (this.status.compareAndSet(current, new Status(State.HALF_OPEN, current.failures, current.openedAt))) {
						return true;
					}
			}
		}
	}

	/**
	 * The backend answered.
	 */
	public void onSuccess() {
		Status current = this.status.get();
		if (current.state != State.CLOSED || current.failures != 0) {
			this.status.set(new Status(State.CLOSED, 0, 0));
		}
	}

	/**
	 * The backend failed or did not answer in time.
	 */
	public void onFailure() {
		while (true) {
			Status current = this.status.get();
			Status next;
			if (current.state == State.CLOSED && current.failures + 1 < this.failureThreshold) {
				next = new Status(State.CLOSED, current.failures + 1, 0);
			}
			else if (current.state == State.OPEN) {
				return;
			}
			else {
				next = new Status(State.OPEN, current.failures + 1, this.nanoClock.getAsLong());
			}
			if (this.status.compareAndSet(current, next)) {
				return;
			}
		}
	}

	/**
	 * The current state.
	 * @return the state
	 */
	public State state() {
		return this.status.get().state;
	}

	/**
	 * Time until an open breaker lets a probe through.
	 * @return zero unless open
	 */
	public Duration remainingOpen() {
		Status current = this.status.get();
		if (current.state != State.OPEN) {
			return Duration.ZERO;
		}
		return Duration.ofNanos(Math.max(0, this.openNanos - (this.nanoClock.getAsLong() - current.openedAt)));
	}

	/**
	 * States of a breaker.
	 */
	public enum State {

		/** Calls go to the backend. */
		CLOSED,

		/** Calls do not go to the backend. */
		OPEN,

		/** One probe call is on its way to the backend. */
		HALF_OPEN

	}

	private record Status(State state, int failures, long openedAt) {

	}

}
