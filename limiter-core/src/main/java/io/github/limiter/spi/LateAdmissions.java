package io.github.limiter.spi;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.BiFunction;

import io.github.limiter.Decision;
import io.github.limiter.LimitRequest;
import io.github.limiter.Operation;

/**
 * Admissions that reach nobody are given back. A caller may stop waiting for a decision (the guard's deadline, a
 * reactive subscriber that goes away) and complete its future itself; whoever then holds an admission for that
 * caller gives its permits back, since nobody acts on them. The backends, the guard and the limiter's waits all do it
 * through this class. A refund that fails is logged with its reason, at most every 10 s: the permits then count until
 * their window passes (stricter, never looser).
 */
public final class LateAdmissions {

	private final BiFunction<List<LimitRequest>, Decision, CompletionStage<Void>> refund;

	private final OccasionalWarning lost;

	/**
	 * Gives admissions back through {@code refund}.
	 * @param source the class whose logger reports a refund that failed
	 * @param refund gives an admission's permits back ({@link RateLimiterBackend#refundAsync}, say)
	 */
	public LateAdmissions(Class<?> source, BiFunction<List<LimitRequest>, Decision, CompletionStage<Void>> refund) {
		this.refund = refund;
		this.lost = new OccasionalWarning(source);
	}

	/**
	 * Completes a caller's future with its decision, or with the failure; an admission its caller no longer waits for
	 * (the future was already completed) is given back.
	 * @param caller the future the caller holds
	 * @param requests the requests decided
	 * @param operation the operation: only acquisitions take permits
	 * @param decision the decision, or {@code null} on failure
	 * @param failure the failure, or {@code null}
	 */
	public void deliver(CompletableFuture<Decision> caller, List<LimitRequest> requests, Operation operation,
			Decision decision, Throwable failure) {
		if (failure != null) {
			caller.completeExceptionally(failure);
		}
		else if (!caller.complete(decision) && operation.acquires()) {
			giveBack(requests, decision);
		}
	}

	/**
	 * Gives back an admission that reached nobody; a rejection took nothing.
	 * @param requests the requests decided
	 * @param decision the decision
	 */
	public void giveBack(List<LimitRequest> requests, Decision decision) {
		if (!decision.allowed()) {
			return;
		}
		CompletionStage<Void> given;
		try {
			given = this.refund.apply(requests, decision);
		}
		catch (RuntimeException ex) {
			given = CompletableFuture.failedFuture(ex);
		}
		given.whenComplete((done, failure) -> {
			if (failure != null) {
				this.lost.warn(() -> "Rate limiter: could not give back the permits of " + decision.limitName()
						+ ", admitted after its caller stopped waiting (" + OccasionalWarning.reason(failure)
						+ "); they count until their window passes.");
			}
		});
	}

}
