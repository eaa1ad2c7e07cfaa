package io.github.limiter;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.locks.LockSupport;

/**
 * A clock and a copy of its reading that one daemon thread refreshes every tick, so that reading the copy is a memory
 * read. The thread runs only while the copy is read: after a period of ticks in which nothing read it, it stops, and
 * the first read after that reads the clock, publishes the reading and starts it again. Under steady reading the
 * thread never stops, and a read is two memory reads (a read also marks the tick as used, writing only when the mark
 * was cleared: once a tick).
 */
final class TickingClock implements TimeSource {

	/** The system clock, refreshed every millisecond, stopping after a second without reads. */
	static final TickingClock SYSTEM = new TickingClock(TimeSource.SYSTEM, 1_000_000L, 1_000, "limiter-clock");

	/** The copy's value while the thread is stopped. */
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

	private final Thread ticker;

	private volatile long recent = ASLEEP;

	/** Whether the copy was read since the last tick. */
	private volatile boolean read;

	/** Times the thread was started (tests). */
	private volatile int starts;

	/**
	 * @param clock the clock read
	 * @param tickNanos time between two refreshes of the copy
	 * @param ticksPerPeriod refreshes in a period: the thread stops after a period in which the copy was not read
	 * @param name the thread's name
	 */
	TickingClock(TimeSource clock, long tickNanos, int ticksPerPeriod, String name) {
		this.clock = clock;
		this.tickNanos = tickNanos;
		this.ticksPerPeriod = ticksPerPeriod;
		this.ticker = new Thread(this::tick, name);
		this.ticker.setDaemon(true);
		// No application's class loader is kept alive by a thread that outlives it.
		this.ticker.setContextClassLoader(null);
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

	/** Whether the thread is refreshing the copy (tests). */
	boolean awake() {
		return this.recent != ASLEEP;
	}

	/** Times the thread was started (tests). */
	int starts() {
		return this.starts;
	}

	/** Publishes a reading of the clock and starts the thread, unless a concurrent read did. */
	private long wake() {
		long now = this.clock.nowMicros();
		if (RECENT.compareAndSet(this, ASLEEP, now)) {
			this.starts++;
			synchronized (this) {
				if (this.ticker.getState() == Thread.State.NEW) {
					this.ticker.start();
				}
			}
			LockSupport.unpark(this.ticker);
		}
		return now;
	}

	/**
	 * Refreshes the copy every tick, and clears the mark of a read every tick too: readers then set it about once a
	 * tick each, often enough that the compiled read keeps both of its branches instead of being recompiled when a
	 * rare one is taken.
	 */
	private void tick() {
		int unread = 0;
		while (true) {
			LockSupport.parkNanos(this, this.tickNanos);
			this.recent = this.clock.nowMicros();
			if (this.read) {
				this.read = false;
				unread = 0;
			}
			else if (++unread >= this.ticksPerPeriod) {
				this.recent = ASLEEP;
				while (this.recent == ASLEEP) {
					LockSupport.park(this);
				}
				unread = 0;
			}
		}
	}

}
