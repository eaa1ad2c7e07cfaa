package io.github.limiter;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;

import io.github.limiter.event.RateLimiterListener;
import io.github.limiter.spi.LateAdmissions;
import io.github.limiter.spi.OccasionalWarning;
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

	/** Most decisions one waiting acquisition asks for. */
	public static final int MAX_WAIT_ATTEMPTS = 3;

	/** Longest {@code maxWait} accepted, as the longest window: 3660 days. */
	public static final Duration MAX_WAIT = Duration.ofDays(3660);

	/** Gives back what a wait was admitted after its caller stopped waiting. */
	private final LateAdmissions late = new LateAdmissions(RateLimiter.class, this::refundAsync);

	private final RateLimiterBackend backend;

	private final List<RateLimiterListener> listeners;

	/**
	 * A listener that throws may do so on every decision: logged with its stack trace once, then every 10 s; one
	 * warning per listener, so that one failing on every call cannot hide another.
	 */
	private final OccasionalWarning[] listenerFailures;

	private RateLimiter(RateLimiterBackend backend, List<RateLimiterListener> listeners) {
		this.backend = Objects.requireNonNull(backend, "backend must not be null");
		this.listeners = listeners;
		this.listenerFailures = new OccasionalWarning[listeners.size()];
		for (int i = 0; i < listeners.size(); i++) {
			this.listenerFailures[i] = new OccasionalWarning(RateLimiter.class);
		}
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
	 * Takes one permit if the limit has room. Returns at once: a queueing limit (a
	 * {@link io.github.limiter.algorithm.LeakyBucket#queueing queueing leaky bucket}) may admit the call for a later
	 * turn, given by the decision's {@link Decision#delay() delay}, which the caller waits before it goes on (as
	 * {@code @RateLimit} does).
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
	 * Takes one permit if the limit has room now, answering only whether it did (Guava's and Resilience4j's
	 * {@code tryAcquire}, Bucket4j's {@code tryConsume}): for a caller that needs no headers or retry-after. As
	 * Guava's, it admits no call that would have to wait: a queueing limit rejects, taking nothing, a call whose turn
	 * is not now (there is no delay to report). On the local backend, and without listeners, nothing is allocated but
	 * the key's next state.
	 * @param limit the limit
	 * @param key the key
	 * @return {@code true} when the permit was taken
	 */
	public boolean tryAcquire(Limit limit, String key) {
		return tryAcquire(limit, key, 1);
	}

	/**
	 * Takes {@code cost} permits if the limit has room now, answering only whether it did; a call that would have to
	 * wait its turn is rejected, as in {@link #tryAcquire(Limit, String)}.
	 * @param limit the limit
	 * @param key the key
	 * @param cost permits to take
	 * @return {@code true} when the permits were taken
	 */
	public boolean tryAcquire(Limit limit, String key, long cost) {
		LimitRequest request = new LimitRequest(Objects.requireNonNull(limit, "limit must not be null")
			.withMaxDelay(Duration.ZERO), key, cost);
		if (this.listeners.isEmpty()) {
			return this.backend.tryAcquire(request);
		}
		return decide(List.of(request), Operation.ACQUIRE).allowed();
	}

	/**
	 * Like {@link #acquire(Limit, String)}, without blocking: on Lettuce and Redisson no thread waits for Redis.
	 * @param limit the limit
	 * @param key the key
	 * @return the decision, when it is made
	 */
	public CompletionStage<Decision> acquireAsync(Limit limit, String key) {
		return decideAsync(List.of(LimitRequest.of(limit, key)), Operation.ACQUIRE);
	}

	/**
	 * Like {@link #acquire(Limit, String, long)}, without blocking.
	 * @param limit the limit
	 * @param key the key
	 * @param cost permits to take
	 * @return the decision, when it is made
	 */
	public CompletionStage<Decision> acquireAsync(Limit limit, String key, long cost) {
		return decideAsync(List.of(new LimitRequest(limit, key, cost)), Operation.ACQUIRE);
	}

	/**
	 * Takes one permit from every limit if all have room, otherwise none.
	 * @param requests the limits and keys
	 * @return the combined decision
	 * @throws IllegalArgumentException when two requests name the same limit and key (ask once, with the costs added)
	 */
	public Decision acquire(LimitRequest... requests) {
		return decide(List.of(requests), Operation.ACQUIRE);
	}

	/**
	 * Takes the permits of every limit, waiting up to {@code maxWait} for them instead of being rejected at once
	 * (Redisson {@code tryAcquire(timeout)}). The wait is the decision's retry-after: the backend is asked again at
	 * most {@value #MAX_WAIT_ATTEMPTS} times in all, never polled, and not at all when the retry-after already exceeds
	 * what is left of {@code maxWait}. A queueing limit (nginx {@code burst} without {@code nodelay}) admits a call
	 * only if its turn comes within what is left of {@code maxWait} ({@link Limit#withMaxDelay}), so the retries and
	 * the admitted call's {@link Decision#delay() delay} together never exceed it. That delay is the caller's to wait:
	 * this method returns as soon as the call is admitted.
	 * @param requests the limits and keys
	 * @param maxWait the longest wait
	 * @return the last decision: allowed, or the rejection to report
	 * @throws InterruptedException when the waiting thread is interrupted
	 * @throws IllegalArgumentException when {@code maxWait} is negative or above {@link #MAX_WAIT}
	 */
	public Decision acquire(List<LimitRequest> requests, Duration maxWait) throws InterruptedException {
		long deadline = System.nanoTime() + waitNanos(maxWait);
		List<LimitRequest> asked = withMaxDelay(requests, maxWait);
		Decision decision = decide(asked, Operation.ACQUIRE);
		for (int attempt = 1; attempt < MAX_WAIT_ATTEMPTS && !decision.allowed(); attempt++) {
			long wait = waitNanos(asked, decision, deadline);
			if (wait < 0) {
				break;
			}
			TimeUnit.NANOSECONDS.sleep(wait);
			asked = withMaxDelay(requests, left(deadline));
			decision = decide(asked, Operation.ACQUIRE);
		}
		return decision;
	}

	/**
	 * Like {@link #acquire(List, Duration)}, without blocking: the waits are scheduled, not slept. A caller that stops
	 * waiting cancels (or completes) the returned future: the backend is asked nothing more, and an admission that
	 * comes after that is given back, since nobody will use it.
	 * @param requests the limits and keys
	 * @param maxWait the longest wait
	 * @return the last decision
	 */
	public CompletionStage<Decision> acquireAsync(List<LimitRequest> requests, Duration maxWait) {
		long deadline = System.nanoTime() + waitNanos(maxWait);
		CompletableFuture<Decision> result = new CompletableFuture<>();
		attempt(requests, maxWait, deadline, 1, result);
		return result;
	}

	/** Asks once, then completes the wait or schedules the next attempt, unless the caller has stopped waiting. */
	private void attempt(List<LimitRequest> requests, Duration left, long deadline, int attempt,
			CompletableFuture<Decision> result) {
		List<LimitRequest> asked = withMaxDelay(requests, left);
		decideAsync(asked, Operation.ACQUIRE).whenComplete((decision, failure) -> {
			if (failure != null) {
				result.completeExceptionally(failure);
				return;
			}
			long wait = decision.allowed() || attempt >= MAX_WAIT_ATTEMPTS ? -1 : waitNanos(asked, decision, deadline);
			if (wait < 0) {
				this.late.deliver(result, asked, Operation.ACQUIRE, decision, null);
				return;
			}
			if (result.isDone()) {
				return;
			}
			CompletableFuture.delayedExecutor(wait, TimeUnit.NANOSECONDS).execute(() -> {
				try {
					if (!result.isDone()) {
						attempt(requests, left(deadline), deadline, attempt + 1, result);
					}
				}
				catch (RuntimeException ex) {
					result.completeExceptionally(ex);
				}
			});
		});
	}

	/** The requests with each queueing limit bounded to a delay of {@code left}; the same list when none queues. */
	private static List<LimitRequest> withMaxDelay(List<LimitRequest> requests, Duration left) {
		List<LimitRequest> bounded = null;
		for (int i = 0; i < requests.size(); i++) {
			LimitRequest request = requests.get(i);
			Limit limit = request.limit().withMaxDelay(left);
			if (limit != request.limit()) {
				if (bounded == null) {
					bounded = new ArrayList<>(requests);
				}
				bounded.set(i, new LimitRequest(limit, request.key(), request.cost()));
			}
		}
		return (bounded != null) ? bounded : requests;
	}

	private static Duration left(long deadline) {
		return Duration.ofNanos(Math.max(0, deadline - System.nanoTime()));
	}

	private static long waitNanos(Duration maxWait) {
		Objects.requireNonNull(maxWait, "maxWait must not be null");
		if (maxWait.isNegative() || maxWait.compareTo(MAX_WAIT) > 0) {
			throw new IllegalArgumentException("maxWait must be between 0 and " + MAX_WAIT.toDays() + " days but was "
					+ DurationText.of(maxWait));
		}
		return maxWait.toNanos();
	}

	/**
	 * How long to wait before asking again: the refusal's retry time, or -1 when waiting cannot admit the call (the
	 * retry lies past the deadline, or a queueing limit refused it because its turn lies beyond what is left).
	 */
	private static long waitNanos(List<LimitRequest> asked, Decision decision, long deadline) {
		long wait = decision.retryAfterMicros() * 1000;
		if (wait <= 0 || System.nanoTime() + wait > deadline) {
			return -1;
		}
		// Only the backend's own refusals tell where a queue ends: a failure policy's tells when to ask again.
		List<Decision> parts = decision.parts().isEmpty() ? List.of(decision) : decision.parts();
		for (int i = 0; i < parts.size() && i < asked.size(); i++) {
			Decision part = parts.get(i);
			if (!part.allowed() && part.origin().byBackend() && !asked.get(i).limit().admitsAfterWaiting(part)) {
				return -1;
			}
		}
		return wait;
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
	 * Gives back the permits an admitted acquire took, for a call that turned out not to count. Taking first and giving
	 * back is how to count only failures without letting concurrent attempts through together: every attempt holds
	 * its permit while it runs, and only the ones that succeed give it back.
	 * <pre>{@code
	 * Decision attempt = limiter.acquire(failures, username);   // refused: too many failures
	 * boolean failed = ...;                                     // run the attempt
	 * if (!failed) limiter.refund(List.of(LimitRequest.of(failures, username)), attempt);
	 * }</pre>
	 * A decision gives its permits back once: a second refund of it does nothing, even when the first failed (a refund
	 * that timed out may still land).
	 * <p>Give back with the very requests the acquire was made with and its decision. A decision records the limits it
	 * decided, not the keys, costs or operation: a refund with another key or a higher cost, or of a check's decision
	 * (which took nothing), is not refused here and gives back permits that this call never took.
	 * @param requests the requests of the acquire, in its order
	 * @param acquired its decision, which must have been admitted
	 * @throws io.github.limiter.spi.BackendException when the backend cannot take the permits back
	 * @throws IllegalArgumentException when the decision was not admitted, or is of other limits (their number, names
	 * or order)
	 */
	public void refund(List<LimitRequest> requests, Decision acquired) {
		RateLimiterBackend.join(refundAsync(requests, acquired));
	}

	/**
	 * Gives back the permits an admitted acquire took, without blocking (see {@link #refund}); once per decision.
	 * @param requests the requests of the acquire, in its order
	 * @param acquired its decision, which must have been admitted
	 * @return completes when the permits are back
	 */
	public CompletionStage<Void> refundAsync(List<LimitRequest> requests, Decision acquired) {
		RateLimiterBackend.parts(requests, acquired);
		if (!acquired.claimRefund()) {
			return CompletableFuture.completedFuture(null);
		}
		return this.backend.refundAsync(requests, acquired);
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
	 * @throws IllegalArgumentException when two requests name the same limit and key (ask once, with the costs added)
	 */
	public Decision decide(List<LimitRequest> requests, Operation operation) {
		LimitRequest.requireDistinct(requests);
		Objects.requireNonNull(operation, "operation must not be null");
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
		return decideAsync(requests, operation, true);
	}

	/**
	 * Decides the first step of a call whose other limits are decided next, as {@link #decideAsync(List, Operation)}
	 * does; an admission is told to the listeners later, by {@link #told}, once the caller knows that the call passed
	 * the other limits too (as in one decision over several limits, a limit counts nothing for a call another one
	 * rejected). A rejection or a failure is told at once.
	 * @param requests the limits and keys, decided together
	 * @param operation the operation
	 * @param tellAdmission whether an admission is told at once
	 * @return the decision, when it is made
	 */
	public CompletionStage<Decision> decideAsync(List<LimitRequest> requests, Operation operation,
			boolean tellAdmission) {
		LimitRequest.requireDistinct(requests);
		Objects.requireNonNull(operation, "operation must not be null");
		if (this.listeners.isEmpty()) {
			return this.backend.decideAsync(requests, operation);
		}
		long start = System.nanoTime();
		CompletableFuture<Decision> decided = this.backend.decideAsync(requests, operation).toCompletableFuture()
			.whenComplete((decision, failure) -> {
				if (failure != null) {
					notifyError(requests, operation, failure, System.nanoTime() - start);
				}
				else if (tellAdmission || !decision.allowed()) {
					notifyDecision(requests, operation, decision, System.nanoTime() - start);
				}
			});
		if (decided.isDone()) {
			return decided;
		}
		// The caller holds a future of the limiter's own: one that stops waiting completes it, and an admission that
		// comes afterwards is given back.
		CompletableFuture<Decision> answer = new CompletableFuture<>();
		decided.whenComplete((decision, failure) -> this.late.deliver(answer, requests, operation, decision, failure));
		return answer;
	}

	/**
	 * Tells the listeners of an admission that {@link #decideAsync(List, Operation, boolean)} held back, once the call
	 * passed its other limits.
	 * @param requests the limits of the decision
	 * @param operation the operation
	 * @param decision the admission
	 * @param nanos how long the backend took to decide it
	 */
	public void told(List<LimitRequest> requests, Operation operation, Decision decision, long nanos) {
		notifyDecision(requests, operation, decision, nanos);
	}

	/**
	 * Tells the listeners that a limit was not applied to a call (a condition excluded it), so that metrics count it.
	 * @param limit the limit skipped
	 * @param operation what the call would have asked of it
	 */
	public void skipped(Limit limit, Operation operation) {
		tell(listener -> listener.onSkipped(limit, operation));
	}

	/**
	 * Tells the listeners that a call was refused before any decision because its key could not be had, so that
	 * metrics count it.
	 * @param limit the limit whose key was refused
	 * @param operation what the call would have asked of it
	 */
	public void invalidKey(Limit limit, Operation operation) {
		tell(listener -> listener.onInvalidKey(limit, operation));
	}

	/** On every decision: a loop of its own, with no event object to build. */
	private void notifyDecision(List<LimitRequest> requests, Operation operation, Decision decision, long nanos) {
		for (int i = 0; i < this.listenerFailures.length; i++) {
			RateLimiterListener listener = this.listeners.get(i);
			try {
				listener.onDecision(requests, operation, decision, nanos);
			}
			catch (RuntimeException ex) {
				this.listenerFailures[i].warn(() -> "Rate limiter listener " + listener + " failed", ex);
			}
		}
	}

	private void notifyError(List<LimitRequest> requests, Operation operation, Throwable failure, long nanos) {
		tell(listener -> listener.onError(requests, operation, failure, nanos));
	}

	/** Tells every listener of an event; one that throws is logged and the others are still told. */
	private void tell(java.util.function.Consumer<RateLimiterListener> event) {
		for (int i = 0; i < this.listenerFailures.length; i++) {
			RateLimiterListener listener = this.listeners.get(i);
			try {
				event.accept(listener);
			}
			catch (RuntimeException ex) {
				this.listenerFailures[i].warn(() -> "Rate limiter listener " + listener + " failed", ex);
			}
		}
	}

}
