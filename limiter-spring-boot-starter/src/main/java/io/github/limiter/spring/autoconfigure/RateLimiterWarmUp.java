package io.github.limiter.spring.autoconfigure;

import java.util.List;

import org.springframework.context.SmartLifecycle;

import io.github.limiter.Limit;
import io.github.limiter.RateLimiter;
import io.github.limiter.guard.GuardedBackend;
import io.github.limiter.spring.interceptor.RateLimitOperation;
import io.github.limiter.spring.interceptor.RateLimitOperationSource;

/**
 * Before the web server takes its first request, checks each kind of declared limit once on the shared backend
 * ({@link GuardedBackend#warmUp}), so that the first calls of a new instance find the connection open and the scripts
 * loaded instead of doing that within their deadline. Waits at most the guard's {@code max-deadline}; a backend that
 * is down at startup is then the guard's to handle, as for any decision.
 */
final class RateLimiterWarmUp implements SmartLifecycle {

	private final RateLimiter rateLimiter;

	private final RateLimitOperationSource source;

	private volatile boolean running;

	RateLimiterWarmUp(RateLimiter rateLimiter, RateLimitOperationSource source) {
		this.rateLimiter = rateLimiter;
		this.source = source;
	}

	@Override
	public void start() {
		this.running = true;
		if (!(this.rateLimiter.backend() instanceof GuardedBackend guarded)) {
			return;
		}
		List<Limit> limits = this.source.rateLimitedMethods()
			.stream()
			.flatMap(method -> method.operations().stream())
			.map(RateLimitOperation::limit)
			.toList();
		if (!limits.isEmpty()) {
			guarded.warmUp(limits).toCompletableFuture().join();
		}
	}

	@Override
	public void stop() {
		this.running = false;
	}

	@Override
	public boolean isRunning() {
		return this.running;
	}

	/**
	 * Before the web server starts (Spring Boot starts it at {@code DEFAULT_PHASE - 2048}), after the retuner has read
	 * the overrides.
	 */
	@Override
	public int getPhase() {
		return SmartLifecycle.DEFAULT_PHASE - 4000;
	}

}
