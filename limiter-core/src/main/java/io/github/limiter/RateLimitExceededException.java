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
		super("Rate limit '" + Objects.requireNonNull(decision, "decision must not be null").limitName() + "' "
				+ reason(decision) + "; retry after " + decision.retryAfter().toMillis() + " ms");
		this.decision = decision;
		this.requests = List.copyOf(requests);
	}

	/**
	 * Why the call was rejected, as the message and a web answer's detail say it: the limit had no room
	 * ({@code "exceeded"}); or its store could not answer in time and the failure policy rejected the call, which
	 * says nothing of the room left; or, its store being down, this instance's share of the limit had no room, which
	 * says nothing of what the caller used of the whole limit.
	 * @return the reason, to follow the limit's name
	 */
	public String getReason() {
		return reason(this.decision);
	}

	private static String reason(Decision decision) {
		return switch (decision.origin()) {
			case UNDECIDED, FAIL_CLOSED -> "could not be checked in time";
			case LOCAL_FALLBACK -> "exceeded for this instance's share while the limit's store is down";
			default -> "exceeded";
		};
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
