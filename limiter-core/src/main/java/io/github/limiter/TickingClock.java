package io.github.limiter;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.locks.LockSupport;

/**
 * A clock and a copy of its reading that a daemon thread refreshes every tick, so that reading the copy is a memory
 * read. The thread lives only while the copy is read: after a period of ticks in which nothing read it, it ends, and
 * the first read after that reads the clock, publishes the reading and starts a new thread. Under steady reading the
 * thread lives on, and a read is two memory reads (a read also marks the tick as used, writing only when the mark was
 * cleared: once a tick).
 *
 * <p>No thread exists until the copy is first read, and none a period after reads stop: nothing holds an
 * application's class loader for long or needs closing with it. A thread interrupted (a container stopping the
 * threads it did not start) ends as if idle, and the next read starts another.
 */
final class TickingClock implements TimeSource {

	/** The system clock, refreshed every millisecond; its thread ends after a second without reads. */
	static final TickingClock SYSTEM = new TickingClock(TimeSource.SYSTEM, 1_000_000L, 1_000, "limiter-clock");

	/** The copy's value while no thread refreshes it. */
	private static final long ASLEEP = Long.MIN_VALUE;

	private static final VarHandle RECENT;

	static {
		try {
			RECENT = MethodHandles.lookup().findVarHandle(TickingClock.class, "recent", long.class);
		}
		catch (ReflectiveOperationException ex) {
			throw new ExceptionInInitializerError(ex);
		}
	}

	private final TimeSource clock;

	private final long tickNanos;

	private final int ticksPerPeriod;

	private final String name;

	private volatile long recent = ASLEEP;

	/** Whether the copy was read since the last tick. */
	private volatile boolean read;

	/** Threads started so far (tests). */
	private volatile int starts;

	/**
	 * @param clock the clock read
	 * @param tickNanos time between two refreshes of the copy
	 * @param ticksPerPeriod ticks without a read after which the thread ends
	 * @param name the thread's name
	 */
	TickingClock(TimeSource clock, long tickNanos, int ticksPerPeriod, String name) {
		this.clock = clock;
		this.tickNanos = tickNanos;
		this.ticksPerPeriod = ticksPerPeriod;
		this.name = name;
	}

	@Override
	public long nowMicros() {
		return this.clock.nowMicros();
	}

	@Override
	public long recentMicros() {
		long recent = this.recent;
		if (recent == ASLEEP) {
			return wake();
		}
		if (!this.read) {
			this.read = true;
		}
		return recent;
	}

	@Override
	public boolean ticks() {
		return true;
	}

	/** Whether a thread is refreshing the copy (tests). */
	boolean awake() {
		return this.recent != ASLEEP;
	}

	/** Threads started so far (tests). */
	int starts() {
		return this.starts;
	}

	/**
	 * Publishes a reading of the clock and starts a thread, unless a concurrent read did. A thread that saw the copy
	 * unread has published {@link #ASLEEP} as its last write, so it never overwrites the new one's readings.
	 */
	private long wake() {
		long now = this.clock.nowMicros();
		if (RECENT.compareAndSet(this, ASLEEP, now)) {
			this.starts++;
			// No inherited thread locals: the thread outlives the call that started it.
			Thread ticker = new Thread(null, this::tick, this.name, 0, false);
			ticker.setDaemon(true);
			ticker.setContextClassLoader(null);
			ticker.start();
		}
		return now;
	}

	/**
	 * Refreshes the copy every tick, and clears the mark of a read every tick too: readers then set it about once a
	 * tick each, often enough that the compiled read keeps both of its branches instead of being recompiled when a
	 * rare one is taken. Ends after a period of unread ticks, or when interrupted.
	 */
	private void tick() {
		int unread = 0;
		while (unread < this.ticksPerPeriod && !Thread.currentThread().isInterrupted()) {
			LockSupport.parkNanos(this, this.tickNanos);
			this.recent = this.clock.nowMicros();
			if (this.read) {
				this.read = false;
				unread = 0;
			}
			else {
				unread++;
			}
		}
		this.recent = ASLEEP;
	}

}
