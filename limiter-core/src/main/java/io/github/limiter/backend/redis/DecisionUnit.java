package io.github.limiter.backend.redis;

import java.util.List;
import java.util.concurrent.CompletionStage;

import io.github.limiter.Decision;
import io.github.limiter.LimitRequest;
import io.github.limiter.Operation;

/**
 * A part of a decision that one atomic call can decide: the script over keys of one cluster slot, or one Redisson
 * {@code RRateLimiter}. {@link CompensatingDecision} combines units into one all-or-nothing decision.
 */
public interface DecisionUnit {

	/**
	 * Positions of this unit's requests in the whole decision, ascending.
	 * @return the positions
	 */
	List<Integer> positions();

	/**
	 * This unit's requests.
	 * @return the requests, in the order of {@link #positions()}
	 */
	List<LimitRequest> requests();

	/**
	 * Decides this unit's requests atomically.
	 * @param operation the operation
	 * @return one decision per request, in the order of {@link #positions()}
	 */
	CompletionStage<List<Decision>> run(Operation operation);

	/**
	 * Decides this unit's requests as parts of an {@link Operation#ACQUIRE} that another unit rejected: consumes
	 * nothing, and answers what one atomic decision over every request would answer for them, a limit with room
	 * reporting itself untouched and a limit without its rejection.
	 * @return one decision per request, in the order of {@link #positions()}
	 */
	CompletionStage<List<Decision>> untaken();

	/**
	 * Gives back what a successful {@link Operation#ACQUIRE} of this unit consumed.
	 * @return completes when done, with what each request's limit answers then, consuming nothing: untouched, when the
	 * permits came back; as the acquire left it, when this unit cannot give them back
	 */
	CompletionStage<List<Decision>> refund();

}
