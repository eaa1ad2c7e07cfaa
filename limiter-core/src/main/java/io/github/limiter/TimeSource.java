package io.github.limiter;

/**
 * A clock with microsecond resolution.
 *
 * <p>The local backend reads it for every decision. The Redis backends read the time from Redis itself and accept a
 * time source only for tests, to run specifications at chosen instants.
 */
@FunctionalInterface
public interface TimeSource {

	/** The system clock (wall time since the epoch, in microseconds). */
	TimeSource SYSTEM = () -> {
		java.time.Instant now = java.time.Instant.now();
		return now.getEpochSecond() * 1_000_000L + now.getNano() / 1_000;
	};

	/**
	 * Current time.
	 * @return microseconds since the epoch
	 */
	long nowMicros();

}
