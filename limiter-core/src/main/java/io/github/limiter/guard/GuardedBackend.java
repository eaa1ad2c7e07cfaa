package io.github.limiter.guard;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;

import io.github.limiter.Decision;
import io.github.limiter.Limit;
import io.github.limiter.LimitRequest;
import io.github.limiter.Operation;
import io.github.limiter.TimeSource;
import io.github.limiter.algorithm.AbstractLimit;
import io.github.limiter.backend.local.LocalBackend;
import io.github.limiter.spi.BackendException;
import io.github.limiter.spi.RateLimiterBackend;

/**
 * A backend that always answers within a deadline: when the backend it guards fails, or has not answered when the
 * deadline expires, the {@link FailurePolicy} decides instead, and a {@link CircuitBreaker} stops calling a backend
 * that keeps failing until a probe succeeds.
 *
 * <p>The deadline holds whatever the client's own timeouts and retries are: the caller stops waiting, the late answer
 * is dropped. A client that blocks the calling thread ({@link RateLimiterBackend#blocksCaller()}, Jedis) is called
 * on another thread (the given executor, or a shared pool of daemon threads), so that the caller can stop waiting. Decisions made without the backend carry their {@link Decision#origin() origin} and are
 * counted in {@link #stats()}.
 */
public final class GuardedBackend implements RateLimiterBackend {

	/**
	 * Fires the deadlines. A thread of its own, so that the JDK's shared delay scheduler is never held up, and only
	 * fallback decisions (local and fast) run on it: callers continue on their own threads.
	 */
	private static final java.util.concurrent.ScheduledExecutorService DEADLINES = java.util.concurrent.Executors
		.newSingleThreadScheduledExecutor(runnable -> {
			Thread thread = new Thread(runnable, "limiter-deadline");
			thread.setDaemon(true);
			return thread;
		});

	/** Where calls to a blocking client run when no executor was given, so that the deadline holds. */
	private static final Executor BLOCKING_CALLS = java.util.concurrent.Executors.newCachedThreadPool(runnable -> {
		Thread thread = new Thread(runnable, "limiter-blocking-call");
		thread.setDaemon(true);
		return thread;
	});

	private final RateLimiterBackend delegate;

	private final Duration deadline;

	private final CircuitBreaker breaker;

	private final Function<List<LimitRequest>, FailurePolicy> policies;

	private final int instances;

	private final Executor callExecutor;

	private final LocalBackend local;

	private final Map<Limit, Limit> localLimits = new ConcurrentHashMap<>();

	private final AtomicLong failures = new AtomicLong();

	private final AtomicLong degraded = new AtomicLong();

	private final AtomicReference<Failure> lastFailure = new AtomicReference<>();

	private GuardedBackend(Builder builder) {
		this.delegate = builder.delegate;
		this.deadline = builder.deadline;
		this.breaker = new CircuitBreaker(builder.failureThreshold, builder.openDuration, System::nanoTime);
		this.policies = builder.policies;
		this.instances = builder.instances;
		this.callExecutor = (builder.callExecutor == null && this.delegate.blocksCaller()) ? BLOCKING_CALLS
				: builder.callExecutor;
		this.local = LocalBackend.create(TimeSource.SYSTEM, builder.localMaxKeys);
	}

	/**
	 * Starts a builder.
	 * @param delegate the backend to guard
	 * @return a builder
	 */
	public static Builder builder(RateLimiterBackend delegate) {
		return new Builder(Objects.requireNonNull(delegate, "delegate must not be null"));
	}

	/**
	 * The guarded backend.
	 * @return the delegate
	 */
	public RateLimiterBackend delegate() {
		return this.delegate;
	}

	/**
	 * The circuit breaker.
	 * @return the breaker
	 */
	public CircuitBreaker breaker() {
		return this.breaker;
	}

	@Override
	public CompletionStage<Decision> decideAsync(List<LimitRequest> requests, Operation operation) {
		if (!this.breaker.tryAcquirePermission()) {
			return CompletableFuture.completedFuture(fallback(requests, operation));
		}
		CompletableFuture<Decision> answer = new CompletableFuture<>();
		// The delegate's decision, cancelled when the deadline passes first: one still queued is then never sent.
		AtomicReference<CompletionStage<Decision>> pending = new AtomicReference<>();
		try {
			if (this.callExecutor == null) {
				relay(pending, this.delegate.decideAsync(requests, operation), answer);
			}
			else {
				this.callExecutor.execute(() -> {
					try {
						relay(pending, this.delegate.decideAsync(requests, operation), answer);
					}
					catch (Throwable ex) {
						answer.completeExceptionally(ex);
					}
				});
			}
		}
		catch (Throwable ex) {
			// Errors too: a probe that throws must still reach onFailure, or the breaker would stay half-open.
			answer.completeExceptionally(ex);
		}
		if (!answer.isDone()) {
			java.util.concurrent.ScheduledFuture<?> timeout = DEADLINES.schedule(
					() -> answer.completeExceptionally(new TimeoutException()), this.deadline.toNanos(), TimeUnit.NANOSECONDS);
			answer.whenComplete((decision, failure) -> timeout.cancel(false));
		}
		return answer.handle((decision, failure) -> {
			if (failure == null) {
				this.breaker.onSuccess();
				return decision;
			}
			// Given up (the deadline passed): the late decision is cancelled before the caller gets the fallback, so
			// one still queued in the backend is never sent.
			CompletionStage<Decision> late = pending.get();
			if (late != null) {
				late.toCompletableFuture().cancel(false);
			}
			recordFailure(failure);
			return fallback(requests, operation);
		});
	}

	private static <T> void relay(AtomicReference<CompletionStage<T>> pending,
			CompletionStage<T> stage, CompletableFuture<T> target) {
		pending.set(stage);
		if (target.isDone()) {
			stage.toCompletableFuture().cancel(false);
		}
		stage.whenComplete((value, failure) -> {
			if (failure != null) {
				target.completeExceptionally(failure);
			}
			else {
				target.complete(value);
			}
		});
	}

	private void recordFailure(Throwable failure) {
		Throwable cause = (failure instanceof CompletionException && failure.getCause() != null) ? failure.getCause()
				: failure;
		this.breaker.onFailure();
		this.failures.incrementAndGet();
		String message = (cause instanceof TimeoutException)
				? "no answer within " + this.deadline.toMillis() + " ms" : cause.getClass().getSimpleName() + ": " + cause.getMessage();
		this.lastFailure.set(new Failure(Instant.now(), message));
	}

	private Decision fallback(List<LimitRequest> requests, Operation operation) {
		this.degraded.incrementAndGet();
		FailurePolicy policy = this.policies.apply(requests);
		switch (policy) {
			case LOCAL: {
				List<LimitRequest> shares = new ArrayList<>(requests.size());
				for (LimitRequest request : requests) {
					Limit share = this.localLimits.computeIfAbsent(request.limit(), this::share);
					shares.add(new LimitRequest(share, request.key(), Math.min(request.cost(), share.capacity())));
				}
				return this.local.decide(shares, operation).withOrigin(Decision.Origin.LOCAL_FALLBACK);
			}
			case CLOSED: {
				long retryAfter = Math.max(this.breaker.remainingOpen().toNanos() / 1000, this.deadline.toNanos() / 1000);
				return combine(requests, request -> Decision.of(request.limit().name(), false, request.limit().capacity(), 0,
						retryAfter, 0, 0, TimeSource.SYSTEM.nowMicros(), null), Decision.Origin.FAIL_CLOSED);
			}
			default:
				return combine(requests, request -> Decision.of(request.limit().name(), true, request.limit().capacity(),
						request.limit().capacity() - request.cost(), 0, 0, 0, TimeSource.SYSTEM.nowMicros(), null),
						Decision.Origin.FAIL_OPEN);
		}
	}

	private Limit share(Limit limit) {
		if (limit instanceof AbstractLimit<?> known) {
			return known.dividedBy(this.instances);
		}
		throw new IllegalArgumentException("cannot size a local fallback for " + limit);
	}

	private static Decision combine(List<LimitRequest> requests, Function<LimitRequest, Decision> each,
			Decision.Origin origin) {
		List<Decision> parts = new ArrayList<>(requests.size());
		for (LimitRequest request : requests) {
			parts.add(each.apply(request));
		}
		return Decision.combine(parts).withOrigin(origin);
	}

	@Override
	public CompletionStage<Void> resetAsync(Limit limit, String key) {
		this.local.resetAsync(limit, key);
		return this.delegate.resetAsync(limit, key)
			.toCompletableFuture()
			.orTimeout(Math.max(this.deadline.toMillis(), 1000), TimeUnit.MILLISECONDS)
			.exceptionally(failure -> {
				throw new BackendException("could not reset " + limit.name() + " for '" + key + "'", failure);
			});
	}

	/**
	 * What happened so far, for the endpoint and health.
	 * @return the statistics
	 */
	public Stats stats() {
		return new Stats(this.breaker.state(), this.failures.get(), this.degraded.get(), this.lastFailure.get());
	}

	/**
	 * Counters of a guarded backend.
	 *
	 * @param breaker the breaker's state
	 * @param failures calls that failed or timed out
	 * @param degradedDecisions decisions made by the failure policy
	 * @param lastFailure the last failure, or {@code null}
	 */
	public record Stats(CircuitBreaker.State breaker, long failures, long degradedDecisions, Failure lastFailure) {

	}

	/**
	 * A failure of the guarded backend.
	 *
	 * @param at when
	 * @param message what
	 */
	public record Failure(Instant at, String message) {

	}

	/**
	 * Builder of {@link GuardedBackend}.
	 */
	public static final class Builder {

		private final RateLimiterBackend delegate;

		private Duration deadline = Duration.ofMillis(50);

		private int failureThreshold = 5;

		private Duration openDuration = Duration.ofSeconds(5);

		private Function<List<LimitRequest>, FailurePolicy> policies = requests -> FailurePolicy.LOCAL;

		private int instances = 1;

		private int localMaxKeys = LocalBackend.DEFAULT_MAX_KEYS;

		private Executor callExecutor;

		private Builder(RateLimiterBackend delegate) {
			this.delegate = delegate;
		}

		/**
		 * Longest a decision may take before the failure policy decides (50 ms by default).
		 * @param deadline a positive duration
		 * @return this builder
		 */
		public Builder deadline(Duration deadline) {
			if (deadline == null || deadline.isNegative() || deadline.isZero()) {
				throw new IllegalArgumentException("deadline must be positive but was " + deadline);
			}
			this.deadline = deadline;
			return this;
		}

		/**
		 * Consecutive failures that open the circuit (5 by default) and how long it stays open (5 s by default).
		 * @param failureThreshold at least 1
		 * @param openDuration a positive duration
		 * @return this builder
		 */
		public Builder circuitBreaker(int failureThreshold, Duration openDuration) {
			this.failureThreshold = failureThreshold;
			this.openDuration = openDuration;
			return this;
		}

		/**
		 * The failure policy of each decision ({@link FailurePolicy#LOCAL} by default).
		 * @param policies the policy of a decision's requests
		 * @return this builder
		 */
		public Builder failurePolicy(Function<List<LimitRequest>, FailurePolicy> policies) {
			this.policies = Objects.requireNonNull(policies);
			return this;
		}

		/**
		 * Expected number of application instances, which divides limits for the {@link FailurePolicy#LOCAL} policy
		 * (1 by default: each instance then admits up to the whole limit during an outage).
		 * @param instances at least 1
		 * @return this builder
		 */
		public Builder expectedInstances(int instances) {
			if (instances < 1) {
				throw new IllegalArgumentException("expected instances must be at least 1 but was " + instances);
			}
			this.instances = instances;
			return this;
		}

		/**
		 * Most keys the local fallback keeps.
		 * @param maxKeys a positive number
		 * @return this builder
		 */
		public Builder localMaxKeys(int maxKeys) {
			this.localMaxKeys = maxKeys;
			return this;
		}

		/**
		 * Where to call a backend whose client blocks the calling thread, so that the deadline holds.
		 * @param executor the executor, {@code null} to call on the caller's thread (fine for non-blocking clients)
		 * @return this builder
		 */
		public Builder callExecutor(Executor executor) {
			this.callExecutor = executor;
			return this;
		}

		/**
		 * Builds the backend.
		 * @return the backend
		 */
		public GuardedBackend build() {
			return new GuardedBackend(this);
		}

	}

}
