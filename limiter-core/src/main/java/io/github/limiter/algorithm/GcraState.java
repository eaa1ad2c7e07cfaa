package io.github.limiter.algorithm;

/**
 * The state of a {@link TokenBucket} or {@link LeakyBucket} key: the theoretical arrival time of the next permit,
 * exactly, as whole microseconds since the epoch plus ticks of {@code 1/q} microsecond, {@code q} being the
 * bucket's own subdivision of the microsecond (1 when a permit takes whole microseconds); and, for a bucket with a
 * warm-up, how cold it is.
 *
 * @param micros whole microseconds since the epoch
 * @param ticks the fraction of the next microsecond, in ticks, {@code 0 <= ticks < q}
 * @param stored a warming bucket's stored idleness, in whole microseconds, from 0 (warm) to its warm-up period
 * (cold); 0 for buckets without a warm-up
 */
public record GcraState(long micros, long ticks, long stored) {

	/**
	 * The state of a bucket without a warm-up.
	 * @param micros whole microseconds since the epoch
	 * @param ticks the fraction of the next microsecond, in ticks
	 */
	public GcraState(long micros, long ticks) {
		this(micros, ticks, 0);
	}

}
