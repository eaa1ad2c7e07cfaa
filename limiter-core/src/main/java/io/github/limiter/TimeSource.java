package io.github.limiter;

/**
 * A clock with microsecond resolution.
 *
 * <p>The local backend reads it for every decision. The Redis backends read the time from Redis itself and accept a
 * time source only for tests, to run specifications at chosen instants.
 *
 * <p>A source may also keep a {@linkplain #recentMicros() recent reading} that costs a memory read instead of a clock
 * read ({@link #ticking()}). The local backend decides on it the calls that it admits at once, and reads
 * {@link #nowMicros()} before it refuses or delays one, so that an older time never refuses a call.
 */
@FunctionalInterface
public interface TimeSource {

	/** The system clock (wall time since the epoch, in microseconds). */
	TimeSource SYSTEM = () -> {
		java.time.Instant now = java.time.Instant.now();
		return now.getEpochSecond() * 1_000_000L + now.getNano() / 1_000;
	};

	/**
	 * The system clock, with a recent reading refreshed every millisecond by a daemon thread while it is read.
	 *
	 * <p>A decision of the local backend on a token bucket or a leaky bucket then costs no clock read when it admits
	 * (on this project's 2-core machine, 20 ns instead of 48). The price: a call admitted on a reading up to a
	 * millisecond old (longer when the thread is late: a loaded machine, a pause of the JVM) counts from that older
	 * time, so right after a key was used a burst can take up to the limit's rate times that lag more than its
	 * capacity. Calls refused or delayed are decided on the system clock, and so are windows and sliding logs, whose
	 * permits come back all at once. The thread wakes every millisecond while anything reads the clock, ends after a
	 * second without reads, and a new one starts on the next read.
	 * @return the shared ticking system clock
	 */
	static TimeSource ticking() {
		return TickingClock.SYSTEM;
	}

	/**
	 * Current time.
	 * @return microseconds since the epoch
	 */
	long nowMicros();

	/**
	 * A recent reading of the clock, which may lag behind {@link #nowMicros()} when this source {@link #ticks()}.
	 * @return microseconds since the epoch: an earlier reading of the same clock
	 */
	default long recentMicros() {
		return nowMicros();
	}

	/**
	 * Whether {@link #recentMicros()} may lag behind {@link #nowMicros()}.
	 * @return false unless this source keeps a recent reading apart from the clock
	 */
	default boolean ticks() {
		return false;
	}

}
