package io.github.limiter.guard;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;

import io.github.limiter.spi.OccasionalWarning;

/**
 * The deadlines of calls in flight, checked every tick on a scheduler's thread: a call still pending at its deadline
 * is completed with a {@link TimeoutException}, up to a tick after it.
 *
 * <p>Why not {@link CompletableFuture#orTimeout}: it schedules a task per call in the JDK's one delay queue, under
 * that queue's lock, and a call whose deadline comes first (with one caller, every call) wakes the delay thread; the
 * task is then taken out of the queue when the call completes, on the thread that completes it (a Redis client's I/O
 * thread). Measured in the load harness: 12-16 µs more client CPU per decision with one caller, and 5-26% fewer
 * decisions with 64 callers. Here a call costs one append to a queue; nothing is done when it completes, and the
 * check drops completed calls at its next tick.
 *
 * <p>The checks run only while calls are in flight: after a period of ticks with none pending they stop, and the next
 * call starts them again. They run on the scheduler given, one at a time, and take no thread of their own. The calls
 * past their deadline are failed on the executor given, all those of a tick in one task, so that what runs on their
 * failure (a fallback, a probe, the caller's own continuation) never holds up the checks. Each check reads the whole
 * queue: a backend that answers nothing while calls pour in (before the circuit opens) makes each check longer, and
 * the deadlines later, by the time it takes to read every call in flight.
 */
final class Deadlines {

	/** A check or a call's failure that threw: logged with its reason, at most every 10 seconds. */
	private final OccasionalWarning failedCheck = new OccasionalWarning(Deadlines.class);

	private final ConcurrentLinkedQueue<Pending> pending = new ConcurrentLinkedQueue<>();

	/** Whether a check is scheduled or running. */
	private final AtomicBoolean running = new AtomicBoolean();

	private final ScheduledExecutorService scheduler;

	private final Executor expiry;

	private final long tickNanos;

	private final int idleTicks;

	/** Times the checks started (tests). */
	private volatile int starts;

	/**
	 * @param scheduler where the checks run; it must run as long as calls are made
	 * @param expiry where the calls past their deadline are failed
	 * @param tickNanos time between two checks
	 * @param idleTicks checks without a call in flight after which they stop
	 */
	Deadlines(ScheduledExecutorService scheduler, Executor expiry, long tickNanos, int idleTicks) {
		this.scheduler = scheduler;
		this.expiry = expiry;
		this.tickNanos = tickNanos;
		this.idleTicks = idleTicks;
	}

	/**
	 * Completes the call with a {@link TimeoutException} if it is still pending after the given time.
	 * @param call the call
	 * @param timeoutNanos its time, from now
	 * @param <T> the call's result
	 * @return the call
	 */
	<T> CompletableFuture<T> within(CompletableFuture<T> call, long timeoutNanos) {
		if (call.isDone()) {
			return call;
		}
		this.pending.offer(new Pending(call, System.nanoTime() + timeoutNanos));
		// After the append: checks that are stopping look at the queue once more after they stopped running.
		if (!this.running.get() && this.running.compareAndSet(false, true)) {
			this.starts++;
			try {
				next(0);
			}
			catch (RejectedExecutionException ex) {
				this.running.set(false);
				throw ex;
			}
		}
		return call;
	}

	/** Whether the checks are running (tests). */
	boolean awake() {
		return this.running.get();
	}

	/** Times the checks started (tests). */
	int starts() {
		return this.starts;
	}

	private void next(int idle) {
		this.scheduler.schedule(() -> check(idle), this.tickNanos, TimeUnit.NANOSECONDS);
	}

	/**
	 * Fails the calls past their deadline, drops the completed ones and schedules the next check; stops after a period
	 * of checks with no call pending, unless a call came as it stopped. Whatever a check meets, the next one is
	 * scheduled: a check that ended the chain by accident would leave every later deadline unchecked.
	 * @param idle the checks in a row so far that found no call pending
	 */
	private void check(int idle) {
		int quiet = idle + 1;
		try {
			if (expire(System.nanoTime())) {
				quiet = 0;
			}
		}
		catch (RuntimeException | Error ex) {
			quiet = 0;
			this.failedCheck.warn(() -> "Rate limiter: a check of the guard's deadlines failed ("
					+ OccasionalWarning.reason(ex) + "); checking again in a tick");
		}
		if (quiet >= this.idleTicks) {
			this.running.set(false);
			if (this.pending.isEmpty() || !this.running.compareAndSet(false, true)) {
				return;
			}
			quiet = 0;
		}
		next(quiet);
	}

	/**
	 * Drops the completed calls, and hands those past their deadline to the expiry executor.
	 * @param now the time
	 * @return whether a call is still pending
	 */
	private boolean expire(long now) {
		boolean waiting = false;
		List<CompletableFuture<?>> expired = null;
		for (Iterator<Pending> calls = this.pending.iterator(); calls.hasNext();) {
			Pending call = calls.next();
			if (call.future.isDone()) {
				calls.remove();
			}
			else if (now - call.deadline >= 0) {
				calls.remove();
				if (expired == null) {
					expired = new ArrayList<>();
				}
				expired.add(call.future);
			}
			else {
				waiting = true;
			}
		}
		if (expired != null) {
			failElsewhere(expired);
		}
		return waiting;
	}

	/** Fails the calls on the expiry executor, or here if it takes no more tasks. */
	private void failElsewhere(List<CompletableFuture<?>> calls) {
		try {
			this.expiry.execute(() -> fail(calls));
		}
		catch (RejectedExecutionException ex) {
			fail(calls);
		}
	}

	/** Fails each call with a {@link TimeoutException}; one that throws does not keep the others from failing. */
	private void fail(List<CompletableFuture<?>> calls) {
		for (CompletableFuture<?> call : calls) {
			try {
				call.completeExceptionally(new TimeoutException());
			}
			catch (RuntimeException | Error ex) {
				this.failedCheck.warn(() -> "Rate limiter: a call past the guard's deadline threw when failed ("
						+ OccasionalWarning.reason(ex) + ")");
			}
		}
	}

	private record Pending(CompletableFuture<?> future, long deadline) {

	}

}
