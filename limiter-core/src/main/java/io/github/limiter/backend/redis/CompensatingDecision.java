package io.github.limiter.backend.redis;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

import io.github.limiter.Decision;
import io.github.limiter.Operation;
import io.github.limiter.spi.BackendException;
import io.github.limiter.spi.OccasionalWarning;

/**
 * One all-or-nothing decision over units that cannot run in one atomic call (keys in different Redis Cluster slots,
 * or Redisson {@code RRateLimiter}s next to scripted limits).
 *
 * <p>An {@link Operation#ACQUIRE} runs the units one after the other; each is atomic by itself. When a unit rejects
 * (or fails), the units that already consumed are refunded and the decision is a rejection. Between a unit's
 * consumption and its refund, a concurrent call may see those permits as taken and be rejected: the method can
 * under-admit briefly, never over-admit. {@link Operation#CHECK} and {@link Operation#RECORD} run the units
 * concurrently.
 */
public final class CompensatingDecision {

	private static final OccasionalWarning failedRefunds = new OccasionalWarning(CompensatingDecision.class);

	private CompensatingDecision() {
	}

	/**
	 * Decides.
	 * @param units units covering every position of the decision exactly once
	 * @param size number of requests in the decision
	 * @param operation the operation
	 * @return the combined decision
	 */
	public static CompletionStage<Decision> decide(List<DecisionUnit> units, int size, Operation operation) {
		if (units.size() == 1) {
			return units.get(0).run(operation).thenApply(Decision::combine);
		}
		Decision[] parts = new Decision[size];
		if (!operation.acquires()) {
			return runAll(units, 0, operation, parts).thenApply(ignored -> Decision.combine(Arrays.asList(parts)));
		}
		return acquire(units, 0, operation, parts).thenApply(ignored -> Decision.combine(Arrays.asList(parts)));
	}

	private static CompletionStage<Void> acquire(List<DecisionUnit> units, int index, Operation operation,
			Decision[] parts) {
		if (index == units.size()) {
			return CompletableFuture.completedFuture(null);
		}
		DecisionUnit unit = units.get(index);
		return unit.run(operation).handle((decisions, failure) -> {
			if (failure != null) {
				return refund(units, index).thenCompose(ignored -> CompletableFuture.<Void>failedFuture(failure));
			}
			boolean allowed = place(unit, decisions, parts);
			if (allowed) {
				return acquire(units, index + 1, operation, parts);
			}
			return refund(units, index).thenCombine(runAll(units, index + 1, Operation.CHECK, parts), (a, b) -> (Void) null);
		}).thenCompose(stage -> stage);
	}

	/** Refunds the units before {@code end}, which all consumed. A failed refund is logged: it can only under-admit. */
	private static CompletionStage<Void> refund(List<DecisionUnit> units, int end) {
		List<CompletableFuture<Void>> refunds = new ArrayList<>(end);
		for (int i = 0; i < end; i++) {
			DecisionUnit unit = units.get(i);
			refunds.add(unit.refund().toCompletableFuture().exceptionally(ex -> {
				failedRefunds.warn(() -> "Rate limiter: could not refund the permits of " + unit
						+ " after another limit of the same decision rejected (" + OccasionalWarning.reason(ex)
						+ "); they count until their window passes.");
				return null;
			}));
		}
		return CompletableFuture.allOf(refunds.toArray(CompletableFuture[]::new));
	}

	private static CompletionStage<Void> runAll(List<DecisionUnit> units, int from, Operation operation, Decision[] parts) {
		List<CompletableFuture<?>> runs = new ArrayList<>();
		for (int i = from; i < units.size(); i++) {
			DecisionUnit unit = units.get(i);
			runs.add(unit.run(operation).thenAccept(decisions -> place(unit, decisions, parts)).toCompletableFuture());
		}
		return CompletableFuture.allOf(runs.toArray(CompletableFuture[]::new));
	}

	private static boolean place(DecisionUnit unit, List<Decision> decisions, Decision[] parts) {
		List<Integer> positions = unit.positions();
		if (decisions.size() != positions.size()) {
			throw new BackendException("unit " + unit + " answered " + decisions.size() + " decisions for "
					+ positions.size() + " requests", null);
		}
		boolean allowed = true;
		for (int i = 0; i < positions.size(); i++) {
			parts[positions.get(i)] = decisions.get(i);
			allowed &= decisions.get(i).allowed();
		}
		return allowed;
	}

}
