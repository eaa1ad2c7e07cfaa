package io.github.limiter.spring.interceptor;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.function.Supplier;

import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;
import org.springframework.aop.support.AopUtils;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.context.expression.BeanFactoryResolver;
import org.springframework.expression.Expression;
import org.springframework.util.ClassUtils;
import org.springframework.util.function.SingletonSupplier;

import io.github.limiter.Decision;
import io.github.limiter.LimitRequest;
import io.github.limiter.Operation;
import io.github.limiter.RateLimitExceededException;
import io.github.limiter.RateLimiter;
import io.github.limiter.spi.OccasionalWarning;
import io.github.limiter.spi.RateLimiterBackend;
import io.github.limiter.spring.autoconfigure.RateLimiterProperties;
import io.github.limiter.spring.web.Caller;
import io.github.limiter.spring.web.ClientAddress;
import io.github.limiter.backend.local.LocalBackend;

/**
 * Limits calls to methods annotated with {@code @RateLimit}: resolves the keys, asks the rate limiter, and proceeds,
 * calls the fallback or throws {@link RateLimitExceededException}.
 *
 * <p>Every call goes through one pipeline, {@link #admit}: a check of the limits that count only failures, the
 * acquisition of the enforced limits (waiting up to their {@code maxWait}), and the acquisition of the limits in
 * shadow mode, whose rejections are only counted and logged; each step is skipped when the method has no such limit,
 * and steps whose answer is already there are not composed. After the call, the failure-counting limits record it if
 * it failed. How the call waits for the admission depends on its return type ({@link RateLimitedMethod.Shape}):
 * reactive types are decided when subscribed, a {@code CompletionStage} method runs once the decision is there (with
 * the caller's thread context), and a plain method waits on its thread, which must not be an event-loop thread.
 *
 * <p>The response fields of a web request describe its handler's limits: a limited method called by the handler
 * (a service) does not set them, and a rejection's 429 describes the limit that rejected it.
 */
public class RateLimitInterceptor implements MethodInterceptor {


	private static final boolean REACTOR_PRESENT = ClassUtils.isPresent("reactor.core.publisher.Mono",
			RateLimitInterceptor.class.getClassLoader());


	private static final java.util.concurrent.atomic.AtomicReferenceFieldUpdater<Call, Decision> RESERVED =
			java.util.concurrent.atomic.AtomicReferenceFieldUpdater.newUpdater(Call.class, Decision.class, "reserved");

	private static final java.util.concurrent.atomic.AtomicReferenceFieldUpdater<Call, Decision> SHADOWED =
			java.util.concurrent.atomic.AtomicReferenceFieldUpdater.newUpdater(Call.class, Decision.class, "shadowed");

	private static final java.util.concurrent.atomic.AtomicReferenceFieldUpdater<Call, Admission> ADMITTED =
			java.util.concurrent.atomic.AtomicReferenceFieldUpdater.newUpdater(Call.class, Admission.class, "admitted");

	private final RateLimitOperationSource source;

	private final Supplier<RateLimiter> rateLimiter;

	private final RateLimiterProperties properties;

	private final BeanFactoryResolver beanResolver;

	private final Supplier<Executor> continuations;

	/** Warnings logged at most every 10 s each, by topic (a kind of failure and a method or limit). */
	private final Map<String, OccasionalWarning> warnings = new ConcurrentHashMap<>();

	/**
	 * Creates an interceptor.
	 * @param source where limits are found
	 * @param rateLimiter the rate limiter, looked up on first use
	 * @param properties the limiter properties
	 * @param beanFactory resolves {@code @bean} references in key expressions
	 * @param continuations where a {@code CompletionStage} method runs when its decision arrives from another
	 * thread, looked up on first use
	 */
	public RateLimitInterceptor(RateLimitOperationSource source, Supplier<RateLimiter> rateLimiter,
			RateLimiterProperties properties, BeanFactory beanFactory, Supplier<Executor> continuations) {
		this.source = source;
		// Looked up once, on first use: a bean lookup per call would cost more than the rest of the interceptor.
		this.rateLimiter = SingletonSupplier.of(rateLimiter);
		this.properties = properties;
		this.beanResolver = (beanFactory != null) ? new BeanFactoryResolver(beanFactory) : null;
		this.continuations = continuations;
	}

	@Override
	public Object invoke(MethodInvocation invocation) throws Throwable {
		Object target = invocation.getThis();
		Class<?> targetClass = (target != null) ? AopUtils.getTargetClass(target) : null;
		RateLimitedMethod limited = this.source.getRateLimitedMethod(invocation.getMethod(), targetClass);
		if (limited == null) {
			return invocation.proceed();
		}
		return switch (limited.shape()) {
			case REACTIVE -> ReactiveRateLimits.limit(this, invocation, limited, targetClass);
			case STAGE -> limitStage(invocation, limited, targetClass, false);
			case ASYNC_STAGE -> limitStage(invocation, limited, targetClass,
					!(REACTOR_PRESENT && ReactiveRateLimits.onNonBlockingThread()));
			case PLAIN -> limitPlain(invocation, limited, targetClass);
		};
	}

	private Object limitPlain(MethodInvocation invocation, RateLimitedMethod limited, Class<?> targetClass)
			throws Throwable {
		// Only a decision of the local backend without any wait is made without blocking; any other must not be
		// awaited on an event loop (a queueing delay implies mayWait, so it is covered too).
		if ((limited.mayWait() || !(this.rateLimiter.get().backend() instanceof LocalBackend)) && REACTOR_PRESENT
				&& ReactiveRateLimits.onNonBlockingThread()) {
			throw mustNotBlock(limited);
		}
		Call call = new Call(limited, invocation.getArguments(), invocation.getThis(), targetClass, caller(limited));
		Admission admission;
		try {
			admission = await(admit(call));
		}
		catch (InterruptedException ex) {
			throw interrupted(call, ex);
		}
		if (admission.rejection() != null) {
			return rejected(call, admission.rejection());
		}
		describe(call, admission.decision(), admission.requests());
		if (admission.delayNanos() > 0) {
			// A queueing leaky bucket admitted the call on condition that it waits for its turn.
			try {
				TimeUnit.NANOSECONDS.sleep(admission.delayNanos());
			}
			catch (InterruptedException ex) {
				throw interrupted(call, ex);
			}
		}
		if (call.checked.isEmpty()) {
			return invocation.proceed();
		}
		Object result;
		try {
			result = invocation.proceed();
		}
		catch (Throwable failure) {
			settleSafely(call, failure, null, true);
			throw failure;
		}
		settleSafely(call, null, result, true);
		return result;
	}

	/** The caller of a call, looked up only when the method needs it. */
	private static Caller caller(RateLimitedMethod limited) {
		return limited.usesCaller() ? Caller.current() : Caller.unbound();
	}

	private static IllegalStateException mustNotBlock(RateLimitedMethod limited) {
		return new IllegalStateException("@RateLimit on " + limited.description() + ": the method returns "
				+ limited.method().getReturnType().getSimpleName() + " and was called on the non-blocking thread '"
				+ Thread.currentThread().getName() + "', where waiting for the limiter's decision would stall every "
				+ "request of that event loop; return a Mono, Flux or CompletionStage so that the call is decided "
				+ "without blocking, or call the method from a blocking scheduler");
	}

	private static Admission await(CompletableFuture<Admission> admitted) throws Throwable {
		// Bounded: the guard answers within its deadline, and a wait within maxWait. A thread interrupted while it waits
		// stops waiting; one that was interrupted before the call (its status set, by code that had nothing to do with
		// this limit) waits uninterruptibly, as any call of it would decide at once on a backend that answers at once.
		if (Thread.currentThread().isInterrupted()) {
			try {
				return admitted.join();
			}
			catch (CompletionException ex) {
				throw (ex.getCause() != null) ? ex.getCause() : ex;
			}
		}
		try {
			return admitted.get();
		}
		catch (java.util.concurrent.ExecutionException ex) {
			throw (ex.getCause() != null) ? ex.getCause() : ex;
		}
	}

	/**
	 * A call whose thread was interrupted while it waited for its decision, a permit ({@code maxWait}) or its turn in
	 * a queue: it is not made, and what it took goes back, as for a subscriber that cancels. The method's caller gets
	 * the {@link InterruptedException} when the method declares it, and otherwise a {@link CancellationException}
	 * with the thread's interrupt status set again (a checked exception the method does not declare would reach it
	 * as an {@code UndeclaredThrowableException}).
	 */
	private Exception interrupted(Call call, InterruptedException interruption) {
		cancelled(call);
		for (Class<?> declared : call.limited.method().getExceptionTypes()) {
			if (declared.isAssignableFrom(InterruptedException.class)) {
				return interruption;
			}
		}
		Thread.currentThread().interrupt();
		CancellationException cancellation = new CancellationException("Interrupted while " + call.limited.description()
				+ " waited for its permit or its turn; it was not called, and what it took was given back");
		cancellation.initCause(interruption);
		return cancellation;
	}

	/**
	 * Limits a method that returns a {@code CompletionStage}: decided without blocking and run on the continuation
	 * executor, or, {@code here}, decided and run on the current thread.
	 */
	private Object limitStage(MethodInvocation invocation, RateLimitedMethod limited, Class<?> targetClass,
			boolean here) {
		Call call;
		try {
			call = new Call(limited, invocation.getArguments(), invocation.getThis(), targetClass, caller(limited));
		}
		catch (RuntimeException ex) {
			// A key that cannot be had (too long, missing, an expression that fails) fails the stage, as a rejection does.
			return CompletableFuture.failedFuture(ex);
		}
		return here ? limitStageHere(invocation, call) : limitStageLater(invocation, call);
	}

	private Object limitStageLater(MethodInvocation invocation, Call call) {
		CompletableFuture<Admission> admitted = admit(call);
		if (admitted.isDone() && !admitted.isCompletedExceptionally() && admitted.join().delayNanos() == 0) {
			return proceedStage(invocation, call, admitted.join());
		}
		// The method runs on the continuation executor, never on a Redis client's I/O thread or the thread that
		// fires deadlines, and with the caller's request attributes, security context and MDC.
		CompletableFuture<Object> result = new CompletableFuture<>();
		Executor executor = this.continuations.get();
		Object[] outcome = new Object[1];
		// A caller that cancels the stage while the call waits (for its decision, a permit or its turn) is gone: the
		// wait stops, what the call took goes back, and the method is not called.
		result.whenComplete((value, failure) -> {
			if (failure instanceof CancellationException && !call.ran) {
				cancelled(call);
			}
		});
		Runnable proceed = ThreadContexts.wrap(() -> {
			if (!running(call)) {
				return;
			}
			try {
				proceedStage(invocation, call, (Admission) outcome[0]).whenComplete((value, failure) -> {
					if (failure != null) {
						result.completeExceptionally(unwrap(failure));
					}
					else {
						result.complete(value);
					}
				});
			}
			catch (Throwable failure) {
				result.completeExceptionally(failure);
			}
		});
		admitted.whenComplete((admission, failure) -> {
			if (failure != null) {
				result.completeExceptionally(unwrap(failure));
				return;
			}
			outcome[0] = admission;
			if (admission.delayNanos() > 0) {
				// The delay's thread only hands the method over, so that a refusal is seen here too.
				CompletableFuture.delayedExecutor(admission.delayNanos(), TimeUnit.NANOSECONDS, Runnable::run)
					.execute(() -> runOn(executor, proceed, call, admission, result));
			}
			else {
				runOn(executor, proceed, call, admission, result);
			}
		});
		return result;
	}

	/**
	 * Decides a {@code CompletionStage} method on the current thread, which may wait, and runs it there: the thread of
	 * an {@code @Async} method's executor, whose interceptor waits for the stage this returns.
	 */
	private Object limitStageHere(MethodInvocation invocation, Call call) {
		Admission admission;
		try {
			admission = await(admit(call));
			if (admission.rejection() == null && admission.delayNanos() > 0) {
				// A queueing leaky bucket admitted the call on condition that it waits for its turn.
				TimeUnit.NANOSECONDS.sleep(admission.delayNanos());
			}
		}
		catch (InterruptedException ex) {
			return CompletableFuture.failedFuture(interrupted(call, ex));
		}
		catch (Throwable failure) {
			return CompletableFuture.failedFuture(failure);
		}
		return proceedStage(invocation, call, admission);
	}

	/**
	 * Hands a {@code CompletionStage} method to the continuation executor. An executor that refuses it (shut down with
	 * its context, or full) fails the call rather than leave its stage pending for ever: what the call was admitted
	 * with and what it reserved for counting failures go back, since the method never runs (it did not fail), and the
	 * caller learns of the refusal once they are back. A rejected call without a fallback still gets its rejection.
	 */
	private void runOn(Executor executor, Runnable proceed, Call call, Admission admission,
			CompletableFuture<Object> result) {
		try {
			executor.execute(proceed);
		}
		catch (RuntimeException refused) {
			if (admission.rejection() != null && call.limited.fallback() == null) {
				result.completeExceptionally(admission.rejection());
				return;
			}
			logEvery("refused:" + call.limited.description(), System.Logger.Level.WARNING, () -> "Could not run "
					+ call.limited.description() + ": the executor of limited methods that return a CompletionStage "
					+ "refused it (" + refused + "); its caller gets that failure. Logged at most every 10 s per method");
			Admission taken = ADMITTED.getAndSet(call, null);
			CompletableFuture<Void> admissionBack = (taken == null) ? CompletableFuture.completedFuture(null)
					: giveBack(call, taken.requests(), taken.decision(), "though its method never ran").toCompletableFuture();
			CompletionStage<Void> reservationBack = null;
			try {
				reservationBack = settleAsync(call, null, null, true);
			}
			catch (RuntimeException ex) {
				logEvery("settle:" + call.limited.description(), System.Logger.Level.WARNING, () -> "Could not give back "
						+ "what a call of " + call.limited.description() + " reserved; it counts as failed. Logged at "
						+ "most every 10 s per method", ex);
			}
			CompletableFuture<Void> back = (reservationBack == null) ? admissionBack
					: CompletableFuture.allOf(admissionBack, reservationBack.toCompletableFuture());
			back.whenComplete((done, problem) -> result.completeExceptionally(refused));
		}
	}

	/** Runs an admitted (or rejected) {@code CompletionStage} method on the current thread. */
	@SuppressWarnings("unchecked")
	private CompletionStage<Object> proceedStage(MethodInvocation invocation, Call call, Admission admission) {
		if (admission.rejection() != null) {
			try {
				return (CompletionStage<Object>) rejected(call, admission.rejection());
			}
			catch (Throwable failure) {
				return CompletableFuture.failedFuture(failure);
			}
		}
		describe(call, admission.decision(), admission.requests());
		CompletableFuture<Object> proceeded = new CompletableFuture<>();
		try {
			CompletionStage<?> stage = (CompletionStage<?>) invocation.proceed();
			// A method that returns no stage at all is taken as one that completed with nothing, as @Async takes it.
			(stage != null ? stage : CompletableFuture.completedFuture(null)).whenComplete((result, failure) -> {
				try {
					settleSafely(call, unwrap(failure), result, false);
				}
				finally {
					if (failure != null) {
						proceeded.completeExceptionally(unwrap(failure));
					}
					else {
						proceeded.complete(result);
					}
				}
			});
		}
		catch (Throwable failure) {
			settleSafely(call, failure, null, false);
			proceeded.completeExceptionally(failure);
		}
		return proceeded;
	}

	private static Throwable unwrap(Throwable failure) {
		return (failure instanceof CompletionException && failure.getCause() != null) ? failure.getCause() : failure;
	}

	/**
	 * Decides whether a call may proceed: acquire (with waiting), reserve (the limits that count only failures),
	 * shadow. Never blocks when the backend answers asynchronously, and composes no stage for an answer that is
	 * already there.
	 * <p>A limit that counts only failures takes its permit before the call, as any limit does, and gives it back
	 * after the call unless the call failed: so calls running at once cannot all pass a check that none of them has
	 * yet failed (twelve concurrent wrong passwords against a limit of three failures a minute). It is asked only once
	 * the call has passed the other limits: a call they reject never touches it, so that a client over its own limit
	 * (a flood of wrong passwords past its per-IP limit) holds no permit of the user it names, and costs that user's
	 * key nothing. When it rejects, what the other limits admitted goes back, as in one decision over several limits.
	 * @param call the call
	 * @return the admission
	 */
	CompletableFuture<Admission> admit(Call call) {
		RateLimiter limiter = this.rateLimiter.get();
		CompletableFuture<Admission> admitted;
		try {
			admitted = enforce(limiter, call);
			if (!call.checked.isEmpty() || !call.shadow.isEmpty()) {
				admitted = then(admitted, enforced -> {
					if (enforced.rejecting() != null || call.cancelled) {
						return CompletableFuture.completedFuture(enforced);
					}
					return call.checked.isEmpty() ? then(shadow(limiter, call, enforced),
							done -> told(limiter, call, enforced, null, done)) : reserve(limiter, call, enforced);
				});
			}
		}
		catch (RuntimeException ex) {
			admitted = CompletableFuture.failedFuture(ex);
		}
		if (admitted.isDone() && !admitted.isCompletedExceptionally()) {
			return admitted;
		}
		// The call will not run: what it was admitted with and what it reserved go back, unless a cancel already gave
		// them back (each taken once).
		return admitted.whenComplete((admission, failure) -> {
			if (failure != null) {
				giveBackAdmission(call, "though it failed to be admitted");
				Decision taken = RESERVED.getAndSet(call, null);
				if (taken != null) {
					giveBack(call, call.checked, taken, "though it failed to be admitted");
				}
			}
		});
	}

	/**
	 * The failure-counting limits' reservation, for a call the enforced limits admitted; when it is refused, what they
	 * admitted goes back.
	 */
	private CompletableFuture<Admission> reserve(RateLimiter limiter, Call call, Admission enforced) {
		// Recorded by a stage of its own: one composed after it never runs once its caller gave up (cancelled it), and
		// the reservation must still be found to be given back.
		long start = System.nanoTime();
		CompletableFuture<Decision> recorded = limiter.decideAsync(call.checked, Operation.ACQUIRE, false)
			.toCompletableFuture()
			.thenApply(reserved -> {
				if (reserved.allowed()) {
					call.reservedNanos = System.nanoTime() - start;
					call.reserved = reserved;
					if (call.cancelled) {
						cancelled(call);
					}
				}
				return reserved;
			});
		return then(recorded, reserved -> {
			if (call.cancelled) {
				// Whoever waited is gone: what was taken went back with the cancel, and nothing more is asked or told.
				return CompletableFuture.completedFuture(enforced);
			}
			if (!reserved.allowed()) {
				giveBackAdmission(call, "though another of its limits rejected it");
				return CompletableFuture.completedFuture(new Admission(null, reserved, call.checked, 0));
			}
			Admission admission = (enforced.decision() != null) ? enforced
					: new Admission(reserved, null, call.checked, 0);
			return then(shadow(limiter, call, admission), done -> told(limiter, call, enforced, reserved, done));
		});
	}

	/**
	 * Tells the metrics of the admissions held back until the call stood admitted by every limit, shadow limits
	 * included: a limit counts nothing for a call another one rejected, nor for one cancelled meanwhile, as in one
	 * decision over several limits. (A call that waits for its permit tells each of its attempts.)
	 */
	private CompletableFuture<Admission> told(RateLimiter limiter, Call call, Admission enforced, Decision reserved,
			Admission admission) {
		if (!call.cancelled) {
			if (reserved != null) {
				limiter.told(call.checked, Operation.ACQUIRE, reserved, call.reservedNanos);
			}
			if (call.tellsLater() && enforced.decision() != null) {
				limiter.told(call.enforced, Operation.ACQUIRE, enforced.decision(), call.enforcedNanos);
			}
		}
		return CompletableFuture.completedFuture(admission);
	}

	/** The enforced limits' admission, waiting up to {@code maxWait}. */
	private CompletableFuture<Admission> enforce(RateLimiter limiter, Call call) {
		if (call.enforced.isEmpty()) {
			return CompletableFuture.completedFuture(new Admission(null, null, List.of(), 0));
		}
		CompletionStage<Decision> acquired;
		if (call.tellsLater()) {
			long start = System.nanoTime();
			acquired = limiter.decideAsync(call.enforced, Operation.ACQUIRE, false).thenApply(decision -> {
				call.enforcedNanos = System.nanoTime() - start;
				return decision;
			});
		}
		else if (call.maxWait.isZero()) {
			acquired = limiter.decideAsync(call.enforced, Operation.ACQUIRE);
		}
		else {
			// A cancel stops the wait; an admission that comes after it is given back by the limiter.
			CompletableFuture<Decision> waiting = limiter.acquireAsync(call.enforced, call.maxWait).toCompletableFuture();
			call.waiting = waiting;
			acquired = waiting;
		}
		// An answer still on its way is held by a stage of its own, as a reservation is: one composed after it never
		// runs once its caller gave up (cancelled it), and an admission that came meanwhile must still be found to be
		// given back. An answer already there composes nothing.
		CompletableFuture<Decision> decided = acquired.toCompletableFuture();
		return (decided.isDone() && !decided.isCompletedExceptionally())
				? CompletableFuture.completedFuture(hold(call, decided.join()))
				: decided.thenApply(acquire -> hold(call, acquire));
	}

	/**
	 * The admission an acquire decided, held until the method runs (the decision on its way, a queue's delay, a hop to
	 * another thread): a cancel before that gives the permits back.
	 */
	private Admission hold(Call call, Decision acquire) {
		Admission admission = Admission.acquired(acquire, call.enforced);
		if (acquire.allowed()) {
			call.admitted = admission;
			if (call.cancelled) {
				giveBackAdmission(call);
			}
		}
		return admission;
	}

	/**
	 * The shadow limits' decision, held until the method runs as an admission is: a cancel before that gives its
	 * permits back.
	 */
	private CompletableFuture<Admission> shadow(RateLimiter limiter, Call call, Admission admission) {
		if (call.shadow.isEmpty() || call.cancelled) {
			return CompletableFuture.completedFuture(admission);
		}
		CompletableFuture<Decision> held = limiter.decideAsync(call.shadow, Operation.SHADOW).toCompletableFuture()
			.thenApply(shadow -> {
				if (shadow.allowed()) {
					call.shadowed = shadow;
					if (call.cancelled) {
						giveBackShadow(call);
					}
				}
				return shadow;
			});
		return then(held, shadow -> {
			if (!shadow.allowed()) {
				logShadowRejection(call, shadow);
			}
			return CompletableFuture.completedFuture(admission);
		});
	}

	private void giveBackShadow(Call call) {
		Decision shadow = SHADOWED.getAndSet(call, null);
		if (shadow != null) {
			giveBack(call, call.shadow, shadow, "though it was cancelled before it ran");
		}
	}

	/** The next step, applied at once when the answer is already there. */
	private static <T, R> CompletableFuture<R> then(CompletionStage<T> stage, Function<T, CompletableFuture<R>> next) {
		CompletableFuture<T> future = stage.toCompletableFuture();
		if (future.isDone() && !future.isCompletedExceptionally()) {
			return next.apply(future.join());
		}
		return future.thenCompose(next);
	}

	/** Sets the response fields when the call is the request's handler. */
	void describe(Call call, Decision decision, List<LimitRequest> requests) {
		if (decision != null && this.properties.getHeaders().isEnabled() && call.caller.handles(call.limited.method())) {
			call.caller.describe(decision, requests);
		}
	}

	/**
	 * The answer to a rejected call: the fallback's result, or the exception.
	 * @param call the call
	 * @param rejection the rejection
	 * @return the fallback's result
	 * @throws Throwable the rejection, or what the fallback threw
	 */
	Object rejected(Call call, RateLimitExceededException rejection) throws Throwable {
		if (call.limited.fallback() != null) {
			describe(call, rejection.getDecision(), rejection.getRequests());
			return call.limited.fallback().invoke(call.target, call.args, rejection);
		}
		throw rejection;
	}

	/**
	 * Gives back the reservation of every failure-counting limit whose condition says the call did not fail; the
	 * others keep it, which is how the failure is counted.
	 * @param call the call
	 * @param failure what the call threw, or {@code null}
	 * @param result what it returned
	 * @return the refund, or {@code null} when every limit counts the call as failed
	 */
	private CompletionStage<Void> settleAsync(Call call, Throwable failure, Object result, boolean cancelled) {
		// Taken once: a stream may end and be cancelled, and only one of them settles.
		Decision reserved = RESERVED.getAndSet(call, null);
		if (reserved == null) {
			return null;
		}
		if (cancelled) {
			return giveBack(call, call.checked, reserved);
		}
		List<Decision> parts = RateLimiterBackend.parts(call.checked, reserved);
		List<LimitRequest> succeeded = new ArrayList<>(call.checked.size());
		List<Decision> taken = new ArrayList<>(call.checked.size());
		for (int i = 0; i < call.checkedOperations.size(); i++) {
			RateLimitOperation operation = call.checkedOperations.get(i);
			boolean counts = (failure != null) ? operation.countsFailure(failure)
					: operation.recordIf() != null && Boolean.TRUE.equals(evaluateCondition(call, operation.recordIf(), result));
			if (!counts) {
				succeeded.add(call.checked.get(i));
				taken.add(parts.get(i));
			}
		}
		return succeeded.isEmpty() ? null : giveBack(call, succeeded, Decision.combine(taken));
	}

	/**
	 * Gives back what an admitted call took before its method ran, once: the call was cancelled (a reactive subscriber
	 * gave up while it waited for its turn).
	 */
	private void giveBackAdmission(Call call) {
		giveBackAdmission(call, "though it was cancelled before it ran");
	}

	private void giveBackAdmission(Call call, String why) {
		giveBack(call, ADMITTED.getAndSet(call, null), why);
	}

	private void giveBack(Call call, Admission admission, String why) {
		if (admission != null) {
			giveBack(call, admission.requests(), admission.decision(), why);
		}
	}

	/**
	 * The method of an admitted call is about to run: from now on its permits are used, and a cancel no longer gives
	 * them back. A call cancelled meanwhile does not run, and what it was admitted with goes back, once.
	 * @param call the call
	 * @return whether the method may run
	 */
	boolean running(Call call) {
		Admission taken = ADMITTED.getAndSet(call, null);
		Decision shadow = SHADOWED.getAndSet(call, null);
		// Written before the cancel flag is read, as a cancel writes its flag before it reads this one: of a cancel
		// and a start at once, at least one sees the other.
		call.ran = true;
		if (!call.cancelled) {
			return true;
		}
		giveBack(call, taken, "though it was cancelled before it ran");
		if (shadow != null) {
			giveBack(call, call.shadow, shadow, "though it was cancelled before it ran");
		}
		settleSafely(call, null, null, false, true);
		return false;
	}

	/** Gives a reservation back; a refund that fails leaves it taken (stricter, never looser), said at most every 10 s. */
	private CompletionStage<Void> giveBack(Call call, List<LimitRequest> requests, Decision reserved) {
		return giveBack(call, requests, reserved, "though it did not fail: it counts as a failure");
	}

	private CompletionStage<Void> giveBack(Call call, List<LimitRequest> requests, Decision reserved, String why) {
		CompletionStage<Void> refund;
		try {
			refund = this.rateLimiter.get().refundAsync(requests, reserved);
		}
		catch (RuntimeException ex) {
			refund = CompletableFuture.failedFuture(ex);
		}
		return refund.whenComplete((done, problem) -> {
			if (problem != null) {
				logEvery("refund:" + call.limited.description(), System.Logger.Level.WARNING, () -> "Could not give back "
						+ "the permit that a call of " + call.limited.description() + " took on " + reserved.limitName()
						+ ", " + why + " until its window passes (" + unwrap(problem)
						+ "); logged at most every 10 s per method");
			}
		});
	}

	/**
	 * Settles the failure-counting limits, never letting a problem with it replace the call's own outcome.
	 * @param call the call
	 * @param failure what the call threw, or {@code null}
	 * @param result what it returned
	 * @param wait whether to wait for the refund (bounded by the backend's deadline), so that the caller's next call
	 * finds the permit back
	 */
	void settleSafely(Call call, Throwable failure, Object result, boolean wait) {
		settleSafely(call, failure, result, wait, false);
	}

	/**
	 * Gives back every reservation of a call that was cancelled before it ended: it did not fail.
	 * @param call the call
	 */
	void cancelled(Call call) {
		call.cancelled = true;
		CompletableFuture<Decision> waiting = call.waiting;
		if (waiting != null) {
			waiting.cancel(false);
		}
		giveBackAdmission(call);
		giveBackShadow(call);
		// A call cancelled once its method started may have failed (a client that went away mid-attempt): it keeps
		// its reservation, so that attempts dropped before their answer cannot go uncounted.
		if (!call.ran) {
			settleSafely(call, null, null, false, true);
		}
	}

	private void settleSafely(Call call, Throwable failure, Object result, boolean wait, boolean cancelled) {
		try {
			CompletionStage<Void> refunded = settleAsync(call, failure, result, cancelled);
			if (wait && refunded != null) {
				refunded.toCompletableFuture().exceptionally(problem -> null).join();
			}
		}
		catch (RuntimeException ex) {
			logEvery("settle:" + call.limited.description(), System.Logger.Level.WARNING, () -> "Could not decide "
					+ "whether a call of " + call.limited.description() + " failed; it counts as failed. Logged at "
					+ "most every 10 s per method", ex);
		}
	}

	private Object evaluateCondition(Call call, Expression condition, Object result) {
		RateLimitEvaluationContext context = call.context(this.beanResolver);
		context.setVariable("result", result);
		return condition.getValue(context);
	}

	private void logShadowRejection(Call call, Decision decision) {
		logEvery("shadow:" + decision.limitName(), System.Logger.Level.INFO, () -> "Shadow limit '"
				+ decision.limitName() + "' on " + call.limited.description() + " would have rejected a call (" + decision
				+ "); logged at most every 10 s per limit");
	}

	/** Logs a message at most every 10 s per topic, with how many were not logged since. */
	private void logEvery(String topic, System.Logger.Level level, Supplier<String> message) {
		logEvery(topic, level, message, null);
	}

	/** As {@link #logEvery(String, System.Logger.Level, Supplier)}, with a failure's reason; its stack trace once. */
	private void logEvery(String topic, System.Logger.Level level, Supplier<String> message, Throwable failure) {
		this.warnings.computeIfAbsent(topic, (any) -> new OccasionalWarning(RateLimitInterceptor.class, level))
			.warn(message, failure);
	}

	/**
	 * The limit requests of one call, each operation's key evaluated against the arguments and sorted by how the
	 * limit applies.
	 */
	final class Call {

		final RateLimitedMethod limited;

		final Object[] args;

		final Object target;

		final Class<?> targetClass;

		final Caller caller;

		final List<LimitRequest> enforced;

		final List<LimitRequest> checked;

		final List<RateLimitOperation> checkedOperations;

		final List<LimitRequest> shadow;

		final Duration maxWait;

		/** What the failure-counting limits reserved for this call, once admitted; settled (and cleared) after it. */
		volatile Decision reserved;

		/**
		 * How long the enforced limits took to decide, when their admission is told to the metrics only once the
		 * call's failure-counting limits admitted it too.
		 */
		volatile long enforcedNanos;

		/** How long the reservation took to decide, told to the metrics once the call stands admitted. */
		volatile long reservedNanos;

		/** Whether the call was cancelled (a reactive subscriber gave up): a reservation decided after it goes back. */
		volatile boolean cancelled;

		/** Whether the method started: a cancel after that keeps the failure-counting limits' reservation. */
		volatile boolean ran;

		/** What the enforced limits admitted, until the method runs: a cancel before that gives it back. */
		volatile Admission admitted;

		/** What the shadow limits took, until the method runs: a cancel before that gives it back. */
		volatile Decision shadowed;

		/**
		 * Whether the enforced limits' admission is told to the metrics once the call stands admitted by the limits
		 * decided after them (it counts failures, or shadows), rather than at once; a call that waits tells each of
		 * its attempts.
		 */
		boolean tellsLater() {
			return this.maxWait.isZero() && !(this.checked.isEmpty() && this.shadow.isEmpty());
		}

		/** A wait for a permit in progress ({@code maxWait}): a cancel stops it. */
		volatile CompletableFuture<Decision> waiting;

		private RateLimitEvaluationContext context;

		Call(RateLimitedMethod limited, Object[] args, Object target, Class<?> targetClass, Caller caller) {
			this.limited = limited;
			this.args = args;
			this.target = target;
			this.targetClass = targetClass;
			this.caller = caller;
			// Sized once per method: most have one enforced limit and nothing else, and allocate one list.
			this.enforced = (limited.enforced() > 0) ? new ArrayList<>(limited.enforced()) : List.of();
			this.checked = (limited.checked() > 0) ? new ArrayList<>(limited.checked()) : List.of();
			this.checkedOperations = (limited.checked() > 0) ? new ArrayList<>(limited.checked()) : List.of();
			this.shadow = (limited.shadowed() > 0) ? new ArrayList<>(limited.shadowed()) : List.of();
			this.maxWait = limited.maxWait();
			for (RateLimitOperation operation : limited.operations()) {
				if (operation.condition() != null && !applies(operation)) {
					continue;
				}
				String key = key(operation);
				if (key.length() > LimitRequest.MAX_KEY_LENGTH) {
					// The caller's input, not a server error: a 400 that shows the client none of the internals.
					throw badKey(operation, RateLimitKeyException.Reason.TOO_LONG, "The rate limit key of this request is "
							+ key.length() + " characters long; at most " + LimitRequest.MAX_KEY_LENGTH + " are accepted.",
							"evaluated to " + key.length() + " characters");
				}
				LimitRequest request = new LimitRequest(operation.limit(), key, operation.cost());
				if (operation.failuresOnly()) {
					this.checked.add(request);
					this.checkedOperations.add(operation);
				}
				else if (operation.shadow()) {
					this.shadow.add(request);
				}
				else {
					this.enforced.add(request);
				}
			}
		}

		/** Whether the operation's condition says that its limit applies to this call; a skip is counted. */
		private boolean applies(RateLimitOperation operation) {
			if (Boolean.TRUE.equals(evaluate(operation, operation.condition(), "condition", Boolean.class))) {
				return true;
			}
			RateLimitInterceptor.this.rateLimiter.get().skipped(operation.limit(), kind(operation));
			return false;
		}

		/** What a call asks of a limit, as its metrics count it. */
		private static Operation kind(RateLimitOperation operation) {
			return operation.shadow() && !operation.failuresOnly() ? Operation.SHADOW : Operation.ACQUIRE;
		}

		private String key(RateLimitOperation operation) {
			Expression expression = operation.parsedKeyExpression();
			if (expression == null) {
				return "";
			}
			int argument = operation.keyArgument();
			Object value = (argument >= 0) ? ((argument < this.args.length) ? this.args[argument] : null)
					: evaluate(operation, expression, "key", Object.class);
			String key = keyText(operation, value);
			if ((key == null || key.isEmpty()) && RateLimitAnnotationParser.usesCaller(expression)
					&& this.caller.request() == null) {
				logEvery("key:no-request:" + operation.limit().name(), System.Logger.Level.WARNING, () -> "The key '"
						+ operation.keyExpression() + "' of limit '" + operation.limit().name() + "' on "
						+ this.limited.description() + " reads the caller, but the limiter sees no request on thread '"
						+ Thread.currentThread().getName() + "', so the key is empty and limiter.empty-key ("
						+ RateLimitInterceptor.this.properties.getEmptyKey().name().toLowerCase(java.util.Locale.ROOT)
						+ ") decides: a method run on another thread (@Async, an executor, a scheduler) does not see"
						+ " the request that led to it, and in WebFlux a method that returns a plain value instead of a"
						+ " Mono or Flux does not see the request's reactive context; return a Mono or Flux, pass the"
						+ " value as an argument, or propagate the request's context to that thread (a TaskDecorator)."
						+ " Logged at most every 10 s per limit");
			}
			if (key == null || key.isEmpty()) {
				if (RateLimitInterceptor.this.properties.getEmptyKey() == RateLimiterProperties.EmptyKey.REJECT) {
					throw badKey(operation, RateLimitKeyException.Reason.MISSING,
							"This request has no value for a rate limit key that is required.",
							"evaluated to " + ((key == null) ? "null" : "an empty string"));
				}
				return "";
			}
			// A key of the client's address alone keys an IPv6 client by its network, in one notation (expressions and
			// conditions that read #ip otherwise see the address as the server wrote it).
			return operation.keyExpression().equals("#ip")
					? ClientAddress.key(key, RateLimitInterceptor.this.properties.getIpv6PrefixLength()) : key;
		}

		/**
		 * An expression's value for this call. SpEL's own failure (a property of {@code null}, a value of the wrong type)
		 * is a bug of the annotation, not of the caller: it is thrown naming the expression, the limit and the method,
		 * where SpEL's message names none; an unchecked exception thrown by a method the expression calls passes as it
		 * is (SpEL wraps a checked one, which is then named the same way).
		 */
		private <T> T evaluate(RateLimitOperation operation, Expression expression, String attribute, Class<T> type) {
			try {
				return expression.getValue(context(RateLimitInterceptor.this.beanResolver), type);
			}
			catch (org.springframework.expression.EvaluationException ex) {
				throw new IllegalStateException("The " + attribute + " '" + expression.getExpressionString() + "' of limit '"
						+ operation.limit().name() + "' on " + this.limited.description() + " could not be evaluated for "
						+ "this call: " + ex.getMessage(), ex);
			}
		}

		/** The text of a key's value ({@link KeyText}); a value printed by its identity is said, at most every 10 s. */
		private String keyText(RateLimitOperation operation, Object value) {
			return KeyText.of(value, type -> logEvery("key:identity:" + operation.limit().name(),
					System.Logger.Level.WARNING, () -> "The key '" + operation.keyExpression() + "' of limit '"
							+ operation.limit().name() + "' on " + this.limited.description() + " evaluates to a "
							+ ((value.getClass() == type) ? "" : "value holding a ") + type.getTypeName() + ", which has no "
							+ "toString() of its own: every object is a key of its own, so the limit does not hold; key by "
							+ "a value (a field or an id of it). Logged at most every 10 s per limit"));
		}

		private RateLimitKeyException badKey(RateLimitOperation operation, RateLimitKeyException.Reason reason,
				String message, String what) {
			String detail = "the key '" + operation.keyExpression() + "' of limit '" + operation.limit().name() + "' on "
					+ this.limited.description() + " " + what;
			logEvery("key:" + reason + ":" + operation.limit().name(), System.Logger.Level.WARNING,
					() -> "Rejected a call because " + detail + " (" + reason.title().toLowerCase(java.util.Locale.ROOT)
							+ "); logged at most every 10 s per limit");
			RateLimitInterceptor.this.rateLimiter.get().invalidKey(operation.limit(), kind(operation));
			return new RateLimitKeyException(reason, message, detail);
		}

		RateLimitEvaluationContext context(BeanFactoryResolver beanResolver) {
			if (this.context == null) {
				this.context = new RateLimitEvaluationContext(
						new RateLimitExpressionRootObject(this.limited.method(), this.args, this.target, this.targetClass),
						this.limited.parameterNames(), this.args, this.caller);
				if (beanResolver != null) {
					this.context.setBeanResolver(beanResolver);
				}
			}
			return this.context;
		}

	}

	/**
	 * The outcome of {@link #admit}: the decision to expose (admitted) or the rejection.
	 *
	 * @param decision the admitting decision whose numbers the response shows, or {@code null}
	 * @param rejecting the rejecting decision, or {@code null}
	 * @param requests the requests of that decision
	 * @param delayNanos how long the admitted call must wait for its turn
	 */
	record Admission(Decision decision, Decision rejecting, List<LimitRequest> requests, long delayNanos) {

		/** The admission an acquire decided: admitted (with its queueing delay) or rejected. */
		static Admission acquired(Decision acquire, List<LimitRequest> requests) {
			return acquire.allowed() ? new Admission(acquire, null, requests, acquire.delayMicros() * 1000)
					: new Admission(null, acquire, requests, 0);
		}

		RateLimitExceededException rejection() {
			return (this.rejecting != null) ? new RateLimitExceededException(this.rejecting, this.requests) : null;
		}

	}

}
