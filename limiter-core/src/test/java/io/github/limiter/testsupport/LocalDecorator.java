package io.github.limiter.testsupport;

import java.util.List;
import java.util.concurrent.CompletionStage;

import io.github.limiter.Decision;
import io.github.limiter.Limit;
import io.github.limiter.LimitRequest;
import io.github.limiter.Operation;
import io.github.limiter.backend.local.LocalBackend;
import io.github.limiter.spi.RateLimiterBackend;

/**
 * A local backend that a test changes in one respect (slower, or failing some decisions) by overriding
 * {@link #decideAsync}: everything else, refunds and resets included, is the local backend's own.
 */
public class LocalDecorator implements RateLimiterBackend {

	/** The backend decorated. */
	protected final LocalBackend local = LocalBackend.create();

	@Override
	public CompletionStage<Decision> decideAsync(List<LimitRequest> requests, Operation operation) {
		return this.local.decideAsync(requests, operation);
	}

	@Override
	public CompletionStage<Void> resetAsync(Limit limit, String key) {
		return this.local.resetAsync(limit, key);
	}

	@Override
	public CompletionStage<Void> refundAsync(List<LimitRequest> requests, Decision acquired) {
		return this.local.refundAsync(requests, acquired);
	}

}
