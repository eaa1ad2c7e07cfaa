package io.github.limiter.algorithm;

/**
 * What an algorithm says about one call, before anything is stored.
 *
 * @param allowed whether the call fits
 * @param remaining permits left if the outcome is applied
 * @param retryAfterMicros when rejected, time until a retry of the same cost can succeed
 * @param resetAfterMicros time until the limit is full again if the outcome is applied
 * @param delayMicros time an admitted call waits in a leaky bucket's queue
 * @param next the state to store when the call is admitted (the unchanged state otherwise)
 * @param <S> the algorithm's state type
 */
public record Outcome<S>(boolean allowed, long remaining, long retryAfterMicros, long resetAfterMicros, long delayMicros,
		S next) {

}
