package io.github.limiter.backend.redis;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

import io.github.limiter.Decision;
import io.github.limiter.Limit;
import io.github.limiter.Operation;
import io.github.limiter.TimeSource;
import io.github.limiter.spi.BackendException;
import io.github.limiter.spi.OccasionalWarning;

/**
 * One all-or-nothing decision over units that cannot run in one atomic call (keys in different Redis Cluster slots,
 * or Redisson {@code RRateLimiter}s next to scripted limits).
 *
 * <p>An {@link Operation#ACQUIRE} runs the units one after the other; each is atomic by itself. When a unit rejects
 * (or fails), the units that already consumed are refunded and the decision is a rejection; each part then answers
 * what one atomic decision would have answered for it (a limit with room untouched, as it is after the refund or
 * without taking anything; a limit without room its rejection), so that a decision reads the same on a cluster as on
 * one Redis. Between a unit's
 * consumption and its refund, a concurrent call may see those permits as taken and be rejected: the method can
 * under-admit briefly, never over-admit. {@link Operation#CHECK} and {@link Operation#RECORD} run the units
 * concurrently.
 */
public final class CompensatingDecision {

	private static final OccasionalWarning failedRefunds = new OccasionalWarning(CompensatingDecision.class);

	private static final OccasionalWarning unanswered = new OccasionalWarning(CompensatingDecision.class);

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
				List<CompletableFuture<?>> refunds = new ArrayList<>(index);
				for (int i = 0; i < index; i++) {
					refunds.add(refund(units.get(i), parts));
				}
				return CompletableFuture.allOf(refunds.toArray(CompletableFuture[]::new))
					.thenCompose(ignored -> CompletableFuture.<Void>failedFuture(failure));
			}
			boolean allowed = place(unit, decisions, parts);
			if (allowed) {
				return acquire(units, index + 1, operation, parts);
			}
			// Rejected: the units before give back what they took, the units after take nothing, and every part then
			// reads as one atomic decision would have answered it.
			List<CompletableFuture<?>> answers = new ArrayList<>(units.size() - 1);
			for (int i = 0; i < units.size(); i++) {
				if (i < index) {
					answers.add(refund(units.get(i), parts));
				}
				else if (i > index) {
					answers.add(untaken(units.get(i), parts));
				}
			}
			return CompletableFuture.allOf(answers.toArray(CompletableFuture[]::new));
		}).thenCompose(stage -> stage);
	}

	/**
	 * Refunds a unit that consumed, and places what its limits answer once the permits are back. A failed refund is
	 * logged, and its parts stay as the acquire left them: it can only under-admit.
	 */
	private static CompletableFuture<Void> refund(DecisionUnit unit, Decision[] parts) {
		return unit.refund().toCompletableFuture().exceptionally(ex -> {
			failedRefunds.warn(() -> "Rate limiter: could not refund the permits of " + unit
					+ " after another limit of the same decision rejected (" + OccasionalWarning.reason(ex)
					+ "); they count until their window passes.");
			return null;
		}).thenAccept(after -> {
			if (after != null) {
				place(unit, after, parts);
			}
		});
	}

	/**
	 * Places what a unit after the rejecting one answers, taking nothing. The decision is a rejection whatever that
	 * unit says: one that cannot answer (its slot's master is down) leaves parts that claim no room, said at most every
	 * 10 s, rather than fail a decision that another limit has already made.
	 */
	private static CompletableFuture<Void> untaken(DecisionUnit unit, Decision[] parts) {
		return unit.untaken().toCompletableFuture().exceptionally(ex -> {
			unanswered.warn(() -> "Rate limiter: " + unit + " could not say what it holds in a decision that another "
					+ "limit rejected (" + OccasionalWarning.reason(ex) + "); its part of the rejection reports no room.");
			return null;
		}).thenAccept(untaken -> {
			if (untaken != null) {
				place(unit, untaken, parts);
				return;
			}
			List<Integer> positions = unit.positions();
			long now = TimeSource.SYSTEM.nowMicros();
			for (int i = 0; i < positions.size(); i++) {
				Limit limit = unit.requests().get(i).limit();
				parts[positions.get(i)] = Decision.of(limit.name(), true, limit.capacity(), 0, 0, 0, 0, now, null);
			}
		});
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
