package io.github.limiter.testsupport;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Function;

import io.github.limiter.Decision;
import io.github.limiter.Limit;
import io.github.limiter.LimitRequest;
import io.github.limiter.Operation;
import io.github.limiter.spi.RateLimiterBackend;

/**
 * A backend for tests of what surrounds one (the guard, the limiter): its decisions come from a function, and resets
 * and refunds are done at once.
 */
public class StubBackend implements RateLimiterBackend {

	private final Function<List<LimitRequest>, CompletionStage<Decision>> decisions;

	/**
	 * A backend deciding by a function (a subclass of a type of its own, so that a test can tell it apart).
	 * @param decisions the decision of each call
	 */
	protected StubBackend(Function<List<LimitRequest>, CompletionStage<Decision>> decisions) {
		this.decisions = decisions;
	}

	/**
	 * A backend whose every decision fails.
	 * @param failure the failure (a {@code BackendException} for an outage, anything else for a bug)
	 * @return the backend
	 */
	public static StubBackend failingWith(Throwable failure) {
		return new StubBackend(requests -> CompletableFuture.failedFuture(failure));
	}

	@Override
	public CompletionStage<Decision> decideAsync(List<LimitRequest> requests, Operation operation) {
		return this.decisions.apply(requests);
	}

	@Override
	public CompletionStage<Void> resetAsync(Limit limit, String key) {
		return CompletableFuture.completedFuture(null);
	}

	@Override
	public CompletionStage<Void> refundAsync(List<LimitRequest> requests, Decision acquired) {
		return CompletableFuture.completedFuture(null);
	}

}
