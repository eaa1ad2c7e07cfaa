package io.github.limiter.algorithm;

/**
 * The state of a {@link TokenBucket} or {@link LeakyBucket} key: the theoretical arrival time of the next permit,
 * exactly, as whole microseconds since the epoch plus ticks of {@code 1/q} microsecond, {@code q} being the
 * bucket's own subdivision of the microsecond (1 when a permit takes whole microseconds).
 *
 * @param micros whole microseconds since the epoch
 * @param ticks the fraction of the next microsecond, in ticks, {@code 0 <= ticks < q}
 */
public record GcraState(long micros, long ticks) {

}
