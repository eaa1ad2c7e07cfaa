package io.github.limiter;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.locks.LockSupport;

/**
 * A clock and a copy of its reading that one daemon thread refreshes every tick, so that reading the copy is a memory
 * read. The thread runs only while the copy is read: it stops after a number of ticks from its last start, and the
 * first read after that reads the clock, publishes the reading and starts it again (under steady reading, one read a
 * second pays for a clock read and a wake-up).
 */
final class TickingClock implements TimeSource {

	/** The system clock, refreshed every millisecond, stopping after a second. */
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

	private final int ticksPerStart;

	private final Thread ticker;

	private volatile long recent = ASLEEP;

	/**
	 * @param clock the clock read
	 * @param tickNanos time between two refreshes of the copy
	 * @param ticksPerStart refreshes after each start before the thread stops
	 * @param name the thread's name
	 */
	TickingClock(TimeSource clock, long tickNanos, int ticksPerStart, String name) {
		this.clock = clock;
		this.tickNanos = tickNanos;
		this.ticksPerStart = ticksPerStart;
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
		return (recent != ASLEEP) ? recent : wake();
	}

	@Override
	public boolean ticks() {
		return true;
	}

	/** Whether the thread is refreshing the copy (tests). */
	boolean awake() {
		return this.recent != ASLEEP;
	}

	/** Publishes a reading of the clock and starts the thread, unless a concurrent read did. */
	private long wake() {
		long now = this.clock.nowMicros();
		if (RECENT.compareAndSet(this, ASLEEP, now)) {
			synchronized (this) {
				if (this.ticker.getState() == Thread.State.NEW) {
					this.ticker.start();
				}
			}
			LockSupport.unpark(this.ticker);
		}
		return now;
	}

	private void tick() {
		while (true) {
			for (int i = 0; i < this.ticksPerStart; i++) {
				LockSupport.parkNanos(this, this.tickNanos);
				this.recent = this.clock.nowMicros();
			}
			this.recent = ASLEEP;
			while (this.recent == ASLEEP) {
				LockSupport.park(this);
			}
		}
	}

}
