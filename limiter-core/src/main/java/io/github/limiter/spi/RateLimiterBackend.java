package io.github.limiter.spi;

import java.util.List;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;

import io.github.limiter.Decision;
import io.github.limiter.Limit;
import io.github.limiter.LimitRequest;
import io.github.limiter.Operation;

/**
 * Where limits are enforced: the one extension point a storage implements.
 *
 * <p>A backend decides one or more {@link LimitRequest}s as one all-or-nothing decision: with
 * {@link Operation#ACQUIRE}, when any limit rejects, none consumes. Implementations are thread-safe. Failures to reach
 * the storage complete the stage exceptionally with a {@link BackendException}; they are never turned into a
 * decision here (that is the caller's failure policy).
 */
public interface RateLimiterBackend {

	/**
	 * Decides without blocking the caller. A caller that stops waiting (the guard's deadline) may complete the returned
	 * future itself: a backend that admits the call after that gives the permits back, since nobody acts on them. So
	 * return the future you complete, and give back when completing it fails ({@link LateAdmissions#deliver}).
	 * @param requests one or more limit requests, decided together
	 * @param operation what the decision does to the state
	 * @return the decision, combined over the requests ({@link Decision#parts()} in request order)
	 */
	CompletionStage<Decision> decideAsync(List<LimitRequest> requests, Operation operation);

	/**
	 * Decides, blocking until the backend answers.
	 * @param requests one or more limit requests, decided together
	 * @param operation what the decision does to the state
	 * @return the decision
	 * @throws BackendException when the backend cannot decide
	 */
	default Decision decide(List<LimitRequest> requests, Operation operation) {
		return join(decideAsync(requests, operation));
	}

	/**
	 * Takes the permits of one limit if it has room, answering only whether it did: what
	 * {@code decide(List.of(request), Operation.ACQUIRE).allowed()} answers, which is what this default does. A backend
	 * that can skip building the {@link Decision} (the local one, where building it is a fifth of the cost) overrides it.
	 * @param request the limit, key and cost
	 * @return {@code true} when the permits were taken
	 * @throws BackendException when the backend cannot decide
	 */
	default boolean tryAcquire(LimitRequest request) {
		return decide(List.of(request), Operation.ACQUIRE).allowed();
	}

	/**
	 * Whether {@link #decideAsync} may block the calling thread (a client without an asynchronous API, such as Jedis),
	 * so that a caller with a deadline knows to call it from another thread.
	 * @return {@code false} unless the backend blocks
	 */
	default boolean blocksCaller() {
		return false;
	}

	/**
	 * Forgets the state of one key of a limit, as if it had never been used.
	 * @param limit the limit
	 * @param key the key
	 * @return completes when the state is gone
	 */
	CompletionStage<Void> resetAsync(Limit limit, String key);

	/**
	 * Gives back the permits an admitted {@link Operation#ACQUIRE} took, for a call that turned out not to count (a
	 * login that succeeded where only failures count, say). Each limit gives back what it still holds of them (see
	 * {@link io.github.limiter.algorithm.AbstractLimit#refund}); a limit whose permits already left (a window that
	 * ended) is left as it is, so a refund never makes more room than if the call had not come.
	 * @param requests the requests of that decision, in its order
	 * @param acquired that decision: admitted, with one part per request (its time and token say what to give back)
	 * @return completes when the permits are back
	 * @throws IllegalArgumentException when the decision was not admitted or has not one part per request
	 */
	CompletionStage<Void> refundAsync(List<LimitRequest> requests, Decision acquired);

	/**
	 * What each request of an admitted decision took: its parts, in the order of the requests (the decision itself
	 * when there is one request).
	 * @param requests the requests of the decision
	 * @param acquired the decision
	 * @return one part per request
	 * @throws IllegalArgumentException when the decision is null, was not admitted, or has not one part per request
	 * of the same limit
	 */
	static List<Decision> parts(List<LimitRequest> requests, Decision acquired) {
		java.util.Objects.requireNonNull(requests, "requests must not be null");
		if (acquired == null) {
			throw new IllegalArgumentException("a refund needs the admitted decision whose permits it gives back, not null");
		}
		if (!acquired.allowed()) {
			throw new IllegalArgumentException("only an admitted decision took permits to give back: " + acquired);
		}
		List<Decision> parts = acquired.parts().isEmpty() ? List.of(acquired) : acquired.parts();
		if (parts.size() != requests.size()) {
			throw new IllegalArgumentException("a decision of " + parts.size() + " limits cannot give back the permits of "
					+ requests.size() + " requests");
		}
		for (int i = 0; i < parts.size(); i++) {
			String limit = requests.get(i).limit().name();
			if (!parts.get(i).limitName().equals(limit)) {
				throw new IllegalArgumentException("request " + i + " of the refund is of limit '" + limit
						+ "' but the decision's part " + i + " is of limit '" + parts.get(i).limitName()
						+ "': give back with the requests the decision was made for, in their order");
			}
		}
		return parts;
	}

	/**
	 * Waits for a stage of this backend and unwraps its failure.
	 * @param stage a stage returned by a backend
	 * @param <T> the result type
	 * @return the result
	 * @throws BackendException when the stage failed
	 */
	static <T> T join(CompletionStage<T> stage) {
		try {
			return stage.toCompletableFuture().join();
		}
		catch (CompletionException ex) {
			Throwable cause = ex.getCause();
			if (cause instanceof RuntimeException runtime) {
				throw runtime;
			}
			if (cause instanceof Error error) {
				throw error;
			}
			throw new BackendException("rate limiter backend failed", cause);
		}
	}

}
