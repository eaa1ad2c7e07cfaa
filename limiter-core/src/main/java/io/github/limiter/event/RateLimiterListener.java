package io.github.limiter.event;

import java.util.List;

import io.github.limiter.Decision;
import io.github.limiter.Limit;
import io.github.limiter.LimitRequest;
import io.github.limiter.Operation;

/**
 * Observes the decisions of a {@link io.github.limiter.RateLimiter}, for metrics and logs.
 *
 * <p>Called on the thread that completes the decision; implementations must be fast and must not throw (an exception
 * is logged and ignored).
 */
public interface RateLimiterListener {

	/**
	 * A decision was made.
	 * @param requests the limits decided
	 * @param operation the operation
	 * @param decision the decision
	 * @param nanos time the backend took
	 */
	default void onDecision(List<LimitRequest> requests, Operation operation, Decision decision, long nanos) {
	}

	/**
	 * The backend could not decide.
	 * @param requests the limits that were to be decided
	 * @param operation the operation
	 * @param failure the failure
	 * @param nanos time until the failure
	 */
	default void onError(List<LimitRequest> requests, Operation operation, Throwable failure, long nanos) {
	}


	/**
	 * A limit was not applied to a call, which its condition excluded (the starter's {@code @RateLimit(condition)}):
	 * nothing was decided or taken.
	 * @param limit the limit skipped
	 * @param operation what the call would have asked of it
	 */
	default void onSkipped(Limit limit, Operation operation) {
	}

	/**
	 * A call was refused before any decision because its key could not be had (the starter's key expression gave a
	 * key too long, or none where one is required): nothing was decided or taken.
	 * @param limit the limit whose key was refused
	 * @param operation what the call would have asked of it
	 */
	default void onInvalidKey(Limit limit, Operation operation) {
	}

}
