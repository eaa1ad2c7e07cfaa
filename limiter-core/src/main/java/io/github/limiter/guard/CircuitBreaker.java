package io.github.limiter.guard;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.LongSupplier;

/**
 * Whether decisions go to the backend, moved only by probes: a decision that fails or misses its deadline is a
 * suspicion, never a verdict.
 *
 * <p>Closed: decisions go to the backend; a suspicion starts a probe (one at a time). A probe that fails opens the
 * breaker; one that proves nothing (no answer, yet the backend answered other calls) leaves it as it is. Open: no decision goes to the backend; every {@code openDuration} one probe is allowed, and its
 * success closes the breaker; so does, once per opening, the late answer of a probe whose silence opened it
 * ({@link #answeredLate}). A late answer of a decision sent before the breaker opened changes nothing (its caller was
 * answered by the policy already).
 *
 * <p>Anyone may read it ({@link GuardedBackend#breaker()}); only its guard moves it.
 */
public final class CircuitBreaker {

	private final long openNanos;

	private final LongSupplier nanoClock;

	private final AtomicReference<Status> status;

	private final AtomicBoolean probing = new AtomicBoolean();

	/**
	 * Creates a closed breaker.
	 * @param openDuration how long it stays open before the next probe
	 * @param nanoClock a monotonic clock ({@code System::nanoTime})
	 */
	CircuitBreaker(Duration openDuration, LongSupplier nanoClock) {
		if (openDuration == null || openDuration.isNegative() || openDuration.isZero()) {
			throw new IllegalArgumentException("open duration must be positive but was " + openDuration);
		}
		this.openNanos = openDuration.toNanos();
		this.nanoClock = nanoClock;
		this.status = new AtomicReference<>(new Status(false, nanoClock.getAsLong()));
	}

	/**
	 * Whether decisions go to the backend.
	 * @return {@code true} unless open
	 */
	public boolean isClosed() {
		return !this.status.get().open;
	}

	/**
	 * Claims the one probe slot: while closed whenever no probe is in flight, while open only once the open period
	 * since the last failed probe is over. The caller must end the probe with {@link #probeSucceeded} or
	 * {@link #probeFailed}.
	 * @return {@code true} when the caller is to send the probe
	 */
	boolean tryStartProbe() {
		Status current = this.status.get();
		if (current.open && this.nanoClock.getAsLong() - current.since < this.openNanos) {
			return false;
		}
		return this.probing.compareAndSet(false, true);
	}

	/**
	 * The probe answered: the breaker is closed.
	 * @return {@code true} when this closed an open breaker
	 */
	boolean probeSucceeded() {
		Status current = this.status.get();
		boolean closes = current.open && this.status.compareAndSet(current, new Status(false, this.nanoClock.getAsLong()));
		this.probing.set(false);
		return closes;
	}

	/**
	 * The backend answered, late, the probe whose silence opened the breaker: closes it, unless it opened again
	 * since (a later probe failed), leaving any probe in flight to end as it will.
	 * @param opened when the breaker opened on that silence ({@link #openedAt()} then)
	 * @return {@code true} when this closed the breaker
	 */
	boolean answeredLate(long opened) {
		Status current = this.status.get();
		return current.open && current.since == opened
				&& this.status.compareAndSet(current, new Status(false, this.nanoClock.getAsLong()));
	}

	/**
	 * When the breaker last opened or was last refused by a probe (the start of its open period); meaningless while
	 * closed.
	 * @return the instant, on the breaker's clock
	 */
	long openedAt() {
		return this.status.get().since;
	}

	/**
	 * The probe got no answer, but the backend answered something else meanwhile: it is alive, nothing changes.
	 */
	void probeInconclusive() {
		this.probing.set(false);
	}

	/**
	 * The probe got no answer: the breaker is open for another {@code openDuration}.
	 * @return {@code true} when this opened a closed breaker
	 */
	boolean probeFailed() {
		Status current = this.status.get();
		this.status.set(new Status(true, this.nanoClock.getAsLong()));
		this.probing.set(false);
		return !current.open;
	}

	/**
	 * The current state.
	 * @return the state
	 */
	public State state() {
		if (!this.status.get().open) {
			return State.CLOSED;
		}
		return this.probing.get() ? State.HALF_OPEN : State.OPEN;
	}

	/**
	 * Time until an open breaker lets the next probe through.
	 * @return zero unless open
	 */
	public Duration remainingOpen() {
		Status current = this.status.get();
		if (!current.open) {
			return Duration.ZERO;
		}
		return Duration.ofNanos(Math.max(0, this.openNanos - (this.nanoClock.getAsLong() - current.since)));
	}

	/**
	 * How long the breaker has been in its current state (open: since the last failed probe).
	 * @return the duration
	 */
	public Duration inStateFor() {
		return Duration.ofNanos(this.nanoClock.getAsLong() - this.status.get().since);
	}

	/**
	 * States of a breaker.
	 */
	public enum State {

		/** Decisions go to the backend. */
		CLOSED,

		/** Decisions do not go to the backend. */
		OPEN,

		/** Open, and one probe is on its way to the backend. */
		HALF_OPEN

	}

	private record Status(boolean open, long since) {

	}

}
