package io.github.limiter;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletionStage;

import io.github.limiter.event.RateLimiterListener;
import io.github.limiter.spi.RateLimiterBackend;

/**
 * The programmatic entry point: decides limits on a backend and tells listeners.
 *
 * <pre>{@code
 * RateLimiter limiter = RateLimiter.of(backend);
 * Limit perUser = TokenBucket.of("api", 10, Duration.ofSeconds(1));
 * if (limiter.acquire(perUser, userId).allowed()) { ... }
 * }</pre>
 *
 * <p>Instances are immutable and thread-safe; {@link #withListener} returns a new one.
 */
public final class RateLimiter {

	private static final System.Logger logger = System.getLogger(RateLimiter.class.getName());

	private final RateLimiterBackend backend;

	private final List<RateLimiterListener> listeners;

	private RateLimiter(RateLimiterBackend backend, List<RateLimiterListener> listeners) {
		this.backend = Objects.requireNonNull(backend, "backend must not be null");
		this.listeners = listeners;
	}

	/**
	 * A rate limiter on a backend.
	 * @param backend the backend
	 * @return the rate limiter
	 */
	public static RateLimiter of(RateLimiterBackend backend) {
		return new RateLimiter(backend, List.of());
	}

	/**
	 * A rate limiter that also tells the given listener about every decision.
	 * @param listener the listener
	 * @return a new rate limiter
	 */
	public RateLimiter withListener(RateLimiterListener listener) {
		List<RateLimiterListener> all = new ArrayList<>(this.listeners);
		all.add(Objects.requireNonNull(listener, "listener must not be null"));
		return new RateLimiter(this.backend, List.copyOf(all));
	}

	/**
	 * The backend.
	 * @return the backend
	 */
	public RateLimiterBackend backend() {
		return this.backend;
	}

	/**
	 * Takes one permit if the limit has room.
	 * @param limit the limit
	 * @param key the key
	 * @return the decision
	 */
	public Decision acquire(Limit limit, String key) {
		return decide(List.of(LimitRequest.of(limit, key)), Operation.ACQUIRE);
	}

	/**
	 * Takes {@code cost} permits if the limit has room.
	 * @param limit the limit
	 * @param key the key
	 * @param cost permits to take
	 * @return the decision
	 */
	public Decision acquire(Limit limit, String key, long cost) {
		return decide(List.of(new LimitRequest(limit, key, cost)), Operation.ACQUIRE);
	}

	/**
	 * Takes one permit from every limit if all have room, otherwise none.
	 * @param requests the limits and keys
	 * @return the combined decision
	 */
	public Decision acquire(LimitRequest... requests) {
		return decide(List.of(requests), Operation.ACQUIRE);
	}

	/**
	 * Tells whether one permit would be granted, taking nothing.
	 * @param limit the limit
	 * @param key the key
	 * @return the decision
	 */
	public Decision check(Limit limit, String key) {
		return decide(List.of(LimitRequest.of(limit, key)), Operation.CHECK);
	}

	/**
	 * Records one permit whatever the outcome (for example one failed login).
	 * @param limit the limit
	 * @param key the key
	 * @return whether the recorded call was still within the limit, and what is left
	 */
	public Decision record(Limit limit, String key) {
		return decide(List.of(LimitRequest.of(limit, key)), Operation.RECORD);
	}

	/**
	 * Forgets one key of a limit.
	 * @param limit the limit
	 * @param key the key
	 */
	public void reset(Limit limit, String key) {
		RateLimiterBackend.join(this.backend.resetAsync(limit, key));
	}

	/**
	 * Decides, blocking.
	 * @param requests the limits and keys, decided together
	 * @param operation the operation
	 * @return the decision
	 * @throws io.github.limiter.spi.BackendException when the backend cannot decide
	 */
	public Decision decide(List<LimitRequest> requests, Operation operation) {
		if (this.listeners.isEmpty()) {
			return this.backend.decide(requests, operation);
		}
		long start = System.nanoTime();
		try {
			Decision decision = this.backend.decide(requests, operation);
			notifyDecision(requests, operation, decision, System.nanoTime() - start);
			return decision;
		}
		catch (RuntimeException ex) {
			notifyError(requests, operation, ex, System.nanoTime() - start);
			throw ex;
		}
	}

	/**
	 * Decides without blocking.
	 * @param requests the limits and keys, decided together
	 * @param operation the operation
	 * @return the decision
	 */
	public CompletionStage<Decision> decideAsync(List<LimitRequest> requests, Operation operation) {
		if (this.listeners.isEmpty()) {
			return this.backend.decideAsync(requests, operation);
		}
		long start = System.nanoTime();
		return this.backend.decideAsync(requests, operation).whenComplete((decision, failure) -> {
			if (failure != null) {
				notifyError(requests, operation, failure, System.nanoTime() - start);
			}
			else {
				notifyDecision(requests, operation, decision, System.nanoTime() - start);
			}
		});
	}

	private void notifyDecision(List<LimitRequest> requests, Operation operation, Decision decision, long nanos) {
		for (RateLimiterListener listener : this.listeners) {
			try {
				listener.onDecision(requests, operation, decision, nanos);
			}
			catch (RuntimeException ex) {
				logger.log(System.Logger.Level.WARNING, "Rate limiter listener " + listener + " failed", ex);
			}
		}
	}

	private void notifyError(List<LimitRequest> requests, Operation operation, Throwable failure, long nanos) {
		for (RateLimiterListener listener : this.listeners) {
			try {
				listener.onError(requests, operation, failure, nanos);
			}
			catch (RuntimeException ex) {
				logger.log(System.Logger.Level.WARNING, "Rate limiter listener " + listener + " failed", ex);
			}
		}
	}

}
