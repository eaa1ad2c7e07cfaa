package io.github.limiter.guard;

import java.util.Iterator;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;

/**
 * The deadlines of the guard's calls in flight, checked every tick by one daemon thread: a call still pending at its
 * deadline is completed with a {@link TimeoutException}, up to a tick after it.
 *
 * <p>Why not {@link CompletableFuture#orTimeout}: it schedules a task per call in the JDK's one delay queue, under
 * that queue's lock, and a call whose deadline comes first (with one caller, every call) wakes the delay thread; the
 * task is then taken out of the queue when the call completes, on the thread that completes it (a Redis client's I/O
 * thread). Measured in the load harness: 20 µs more client CPU per decision with one caller, and a fifth fewer
 * decisions with 64 callers on one key. Here a call costs one append to a queue; nothing is done when it completes,
 * and the thread drops completed calls at its next tick.
 *
 * <p>The thread lives only while calls are in flight: after a period of ticks with none pending it ends, and the next
 * call starts another. It inherits no thread locals and no context class loader. Interrupted, it ends, and a new one
 * takes over what is still pending.
 */
final class Deadlines {

	/** Checked every millisecond; the thread ends after a second without calls in flight. */
	static final Deadlines SHARED = new Deadlines(1_000_000L, 1_000, "limiter-deadlines");

	private final ConcurrentLinkedQueue<Pending> pending = new ConcurrentLinkedQueue<>();

	private final AtomicBoolean running = new AtomicBoolean();

	private final long tickNanos;

	private final int idleTicks;

	private final String name;

	/** Threads started so far (tests). */
	private volatile int starts;

	/**
	 * @param tickNanos time between two checks
	 * @param idleTicks checks without a call in flight after which the thread ends
	 * @param name the thread's name
	 */
	Deadlines(long tickNanos, int idleTicks, String name) {
		this.tickNanos = tickNanos;
		this.idleTicks = idleTicks;
		this.name = name;
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
		// After the append: a thread that is ending checks the queue once more after it stopped running.
		if (!this.running.get() && this.running.compareAndSet(false, true)) {
			start();
		}
		return call;
	}

	/** Whether a thread is checking deadlines (tests). */
	boolean awake() {
		return this.running.get();
	}

	/** Threads started so far (tests). */
	int starts() {
		return this.starts;
	}

	private void start() {
		this.starts++;
		// No inherited thread locals: the thread outlives the call that started it.
		Thread checker = new Thread(null, this::check, this.name, 0, false);
		checker.setDaemon(true);
		checker.setContextClassLoader(null);
		checker.start();
	}

	/**
	 * Every tick, completes the calls past their deadline and drops the completed ones. Ends after a period of ticks
	 * with no call pending, unless a call came as it ended. A thread that ends otherwise (interrupted) hands what is
	 * pending to a new one.
	 */
	private void check() {
		boolean idleEnd = false;
		try {
			int idle = 0;
			while (!Thread.currentThread().isInterrupted()) {
				LockSupport.parkNanos(this, this.tickNanos);
				idle = expire(System.nanoTime()) ? 0 : idle + 1;
				if (idle >= this.idleTicks) {
					this.running.set(false);
					if (this.pending.isEmpty() || !this.running.compareAndSet(false, true)) {
						idleEnd = true;
						return;
					}
					idle = 0;
				}
			}
		}
		finally {
			if (!idleEnd) {
				this.running.set(false);
				if (!this.pending.isEmpty() && this.running.compareAndSet(false, true)) {
					start();
				}
			}
		}
	}

	/**
	 * Completes the calls past their deadline and drops the completed ones.
	 * @param now the time
	 * @return whether a call is still pending
	 */
	private boolean expire(long now) {
		boolean waiting = false;
		for (Iterator<Pending> calls = this.pending.iterator(); calls.hasNext();) {
			Pending call = calls.next();
			if (call.future.isDone()) {
				calls.remove();
			}
			else if (now - call.deadline >= 0) {
				calls.remove();
				call.future.completeExceptionally(new TimeoutException());
			}
			else {
				waiting = true;
			}
		}
		return waiting;
	}

	private record Pending(CompletableFuture<?> future, long deadline) {

	}

}
