package io.github.limiter;

import java.util.List;
import java.util.Objects;

/**
 * Thrown when a call is rejected by a rate limit. Carries the decision and the limits involved, so that a handler can
 * tell the caller when to retry (for example with HTTP {@code 429 Too Many Requests} and a {@code Retry-After}
 * header).
 */
public class RateLimitExceededException extends RuntimeException {

	private static final long serialVersionUID = 1L;

	private final transient Decision decision;

	private final transient List<LimitRequest> requests;

	/**
	 * Creates an exception.
	 * @param decision the rejecting decision
	 * @param requests the limits decided, in the order of the decision's parts
	 */
	public RateLimitExceededException(Decision decision, List<LimitRequest> requests) {
		super("Rate limit '" + Objects.requireNonNull(decision, "decision must not be null").limitName()
				+ "' exceeded; retry after " + decision.retryAfter().toMillis() + " ms");
		this.decision = decision;
		this.requests = List.copyOf(requests);
	}

	/**
	 * The decision that rejected the call.
	 * @return the decision
	 */
	public Decision getDecision() {
		return this.decision;
	}

	/**
	 * The limits decided, in the order of {@link Decision#parts()} (one element for a single limit).
	 * @return the requests
	 */
	public List<LimitRequest> getRequests() {
		return this.requests;
	}

}
