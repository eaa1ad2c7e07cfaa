package io.github.limiter.spring.interceptor;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;
import org.springframework.aop.support.AopUtils;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.context.expression.BeanFactoryResolver;
import org.springframework.expression.Expression;
import org.springframework.util.ClassUtils;

import io.github.limiter.Decision;
import io.github.limiter.LimitRequest;
import io.github.limiter.Operation;
import io.github.limiter.RateLimitExceededException;
import io.github.limiter.RateLimiter;
import io.github.limiter.spring.autoconfigure.RateLimiterProperties;
import io.github.limiter.spring.web.Caller;
import io.github.limiter.spring.web.RateLimitHeaders;

/**
 * Limits calls to methods annotated with {@code @RateLimit}: resolves the keys, asks the rate limiter, and proceeds,
 * calls the fallback or throws {@link RateLimitExceededException}.
 *
 * <p>One call goes through up to three decisions, each skipped when the method has no such limit: a check of the
 * limits that count only failures, the acquisition of the enforced limits (waiting up to their {@code maxWait}), and
 * the acquisition of the limits in shadow mode, whose rejections are only counted and logged. After the call, the
 * failure-counting limits record the call if it failed. Methods returning {@code Mono}, {@code Flux} or a
 * {@code CompletionStage} are limited when subscribed (or invoked), without blocking; others wait for the decision
 * on the calling thread.
 */
public class RateLimitInterceptor implements MethodInterceptor {

	private static final System.Logger logger = System.getLogger(RateLimitInterceptor.class.getName());

	private static final boolean REACTOR_PRESENT = ClassUtils.isPresent("reactor.core.publisher.Mono",
			RateLimitInterceptor.class.getClassLoader());

	private static final long SHADOW_LOG_INTERVAL_NANOS = TimeUnit.SECONDS.toNanos(10);

	/** Where asynchronous limited methods continue once their decision arrives from another thread. */
	static final java.util.concurrent.Executor CONTINUATIONS = java.util.concurrent.Executors.newCachedThreadPool(runnable -> {
		Thread thread = new Thread(runnable, "limiter-continuation");
		thread.setDaemon(true);
		return thread;
	});

	private final RateLimitOperationSource source;

	private final Supplier<RateLimiter> rateLimiter;

	private final RateLimiterProperties properties;

	private final BeanFactoryResolver beanResolver;

	private final Map<String, Long> shadowLogged = new ConcurrentHashMap<>();

	/**
	 * Creates an interceptor.
	 * @param source where limits are found
	 * @param rateLimiter the rate limiter, looked up on first use
	 * @param properties the limiter properties
	 * @param beanFactory resolves {@code @bean} references in key expressions
	 */
	public RateLimitInterceptor(RateLimitOperationSource source, Supplier<RateLimiter> rateLimiter,
			RateLimiterProperties properties, BeanFactory beanFactory) {
		this.source = source;
		this.rateLimiter = rateLimiter;
		this.properties = properties;
		this.beanResolver = (beanFactory != null) ? new BeanFactoryResolver(beanFactory) : null;
	}

	@Override
	public Object invoke(MethodInvocation invocation) throws Throwable {
		Object target = invocation.getThis();
		Class<?> targetClass = (target != null) ? AopUtils.getTargetClass(target) : null;
		RateLimitedMethod limited = this.source.getRateLimitedMethod(invocation.getMethod(), targetClass);
		if (limited == null) {
			return invocation.proceed();
		}
		Class<?> returnType = invocation.getMethod().getReturnType();
		if (REACTOR_PRESENT && ReactiveRateLimits.isReactive(returnType)) {
			return ReactiveRateLimits.limit(this, invocation, limited, targetClass);
		}
		if (CompletionStage.class.isAssignableFrom(returnType)) {
			return limitStage(invocation, limited, targetClass);
		}
		Call call = new Call(limited, invocation.getArguments(), target, targetClass, Caller.SERVLET);
		Admission admission;
		if (call.checked.isEmpty() && call.shadow.isEmpty() && call.maxWait.isZero() && !call.enforced.isEmpty()) {
			// The common case, one plain acquire: decided directly, without composing stages.
			admission = Admission.acquired(this.rateLimiter.get().decide(call.enforced, Operation.ACQUIRE), call.enforced);
		}
		else {
			try {
				admission = admit(call).toCompletableFuture().join();
			}
			catch (CompletionException ex) {
				throw (ex.getCause() != null) ? ex.getCause() : ex;
			}
		}
		if (admission.rejection() != null) {
			return rejected(call, admission.rejection());
		}
		exposeHeaders(admission);
		if (admission.delayNanos() > 0) {
			// A queueing leaky bucket admitted the call on condition that it waits for its turn.
			TimeUnit.NANOSECONDS.sleep(admission.delayNanos());
		}
		if (call.checked.isEmpty()) {
			return invocation.proceed();
		}
		Object result;
		try {
			result = invocation.proceed();
		}
		catch (Throwable failure) {
			recordFailuresSafely(call, failure, null, true);
			throw failure;
		}
		recordFailuresSafely(call, null, result, true);
		return result;
	}

	private Object limitStage(MethodInvocation invocation, RateLimitedMethod limited, Class<?> targetClass) {
		Call call = new Call(limited, invocation.getArguments(), invocation.getThis(), targetClass, Caller.SERVLET);
		CompletionStage<Admission> admitted = admit(call);
		// The method runs on the caller's thread when the decision is already made, else on the limiter's executor:
		// never on a Redis client's I/O thread or on the thread that fires deadlines.
		CompletableFuture<Admission> decided = admitted.toCompletableFuture();
		CompletionStage<Admission> next = decided.isDone() ? decided : decided.thenApplyAsync(a -> a, CONTINUATIONS);
		return next.<Object>thenCompose(admission -> {
			if (admission.rejection() != null) {
				try {
					@SuppressWarnings("unchecked")
					CompletionStage<Object> fallback = (CompletionStage<Object>) rejected(call, admission.rejection());
					return fallback;
				}
				catch (Throwable failure) {
					return CompletableFuture.failedFuture(failure);
				}
			}
			CompletableFuture<Object> proceeded = new CompletableFuture<>();
			Runnable proceed = () -> {
				try {
					((CompletionStage<?>) invocation.proceed()).whenComplete((result, failure) -> {
						try {
							recordFailuresSafely(call, unwrap(failure), result, false);
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
					recordFailuresSafely(call, failure, null, false);
					proceeded.completeExceptionally(failure);
				}
			};
			if (admission.delayNanos() > 0) {
				CompletableFuture.delayedExecutor(admission.delayNanos(), TimeUnit.NANOSECONDS, CONTINUATIONS).execute(proceed);
			}
			else {
				proceed.run();
			}
			return proceeded;
		});
	}

	private static Throwable unwrap(Throwable failure) {
		return (failure instanceof CompletionException && failure.getCause() != null) ? failure.getCause() : failure;
	}

	/**
	 * Decides whether a call may proceed: check, acquire (with waiting), shadow. Never blocks when the backend
	 * answers asynchronously.
	 * @param call the call
	 * @return the admission
	 */
	CompletionStage<Admission> admit(Call call) {
		RateLimiter limiter = this.rateLimiter.get();
		CompletionStage<Decision> checked = call.checked.isEmpty() ? CompletableFuture.completedFuture(null)
				: limiter.decideAsync(call.checked, Operation.CHECK);
		return checked.thenCompose(check -> {
			if (check != null && !check.allowed()) {
				return CompletableFuture.completedFuture(new Admission(null, check, call.checked, 0));
			}
			CompletionStage<Decision> acquired;
			if (call.enforced.isEmpty()) {
				acquired = CompletableFuture.completedFuture(null);
			}
			else if (call.maxWait.isZero()) {
				acquired = limiter.decideAsync(call.enforced, Operation.ACQUIRE);
			}
			else {
				acquired = limiter.acquireAsync(call.enforced, call.maxWait);
			}
			return acquired.thenCompose(acquire -> {
				if (acquire != null && !acquire.allowed()) {
					return CompletableFuture.completedFuture(Admission.acquired(acquire, call.enforced));
				}
				Admission admission = (acquire != null) ? Admission.acquired(acquire, call.enforced)
						: (check != null) ? new Admission(check, null, call.checked, 0) : new Admission(null, null, List.of(), 0);
				if (call.shadow.isEmpty()) {
					return CompletableFuture.completedFuture(admission);
				}
				return limiter.decideAsync(call.shadow, Operation.SHADOW).thenApply(shadow -> {
					if (!shadow.allowed()) {
						logShadowRejection(call, shadow);
					}
					return admission;
				});
			});
		});
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
			if (this.properties.getHeaders().isEnabled()) {
				RateLimitHeaders.addToCurrentResponse(rejection.getDecision(), rejection.getRequests());
			}
			return call.limited.fallback().invoke(call.target, call.args, rejection);
		}
		throw rejection;
	}

	void exposeHeaders(Admission admission) {
		if (this.properties.getHeaders().isEnabled() && admission.decision() != null) {
			RateLimitHeaders.addToCurrentResponse(admission.decision(), admission.requests());
		}
	}

	/**
	 * Records one permit on every failure-counting limit whose condition says the call failed.
	 * @param call the call
	 * @param failure what the call threw, or {@code null}
	 * @param result what it returned
	 * @return the record, or {@code null} when nothing failed
	 */
	private CompletionStage<?> recordFailuresAsync(Call call, Throwable failure, Object result) {
		if (call.checked.isEmpty()) {
			return null;
		}
		List<LimitRequest> failed = new ArrayList<>(call.checked.size());
		for (int i = 0; i < call.checkedOperations.size(); i++) {
			RateLimitOperation operation = call.checkedOperations.get(i);
			boolean counts = (failure != null) ? operation.countsFailure(failure)
					: operation.recordIf() != null && Boolean.TRUE.equals(evaluateCondition(call, operation.recordIf(), result));
			if (counts) {
				failed.add(call.checked.get(i));
			}
		}
		if (failed.isEmpty()) {
			return null;
		}
		return this.rateLimiter.get().decideAsync(failed, Operation.RECORD).whenComplete((decision, problem) -> {
			if (problem != null) {
				logger.log(System.Logger.Level.WARNING, "Could not record a failed call of " + call.limited.description(),
						problem);
			}
		});
	}

	/**
	 * Records failures, never letting a problem with the recording replace the call's own outcome.
	 * @param call the call
	 * @param failure what the call threw, or {@code null}
	 * @param result what it returned
	 * @param wait whether to wait for the record (bounded by the backend's deadline), so that the next check of the
	 * same caller sees it
	 */
	void recordFailuresSafely(Call call, Throwable failure, Object result, boolean wait) {
		try {
			CompletionStage<?> recorded = recordFailuresAsync(call, failure, result);
			if (wait && recorded != null) {
				recorded.toCompletableFuture().exceptionally(problem -> null).join();
			}
		}
		catch (RuntimeException ex) {
			logger.log(System.Logger.Level.WARNING, "Could not decide whether a call of " + call.limited.description()
					+ " failed; it is not counted", ex);
		}
	}

	private Object evaluateCondition(Call call, Expression condition, Object result) {
		RateLimitEvaluationContext context = call.context(this.beanResolver);
		context.setVariable("result", result);
		return condition.getValue(context);
	}

	private void logShadowRejection(Call call, Decision decision) {
		long now = System.nanoTime();
		Long last = this.shadowLogged.get(decision.limitName());
		if (last == null || now - last > SHADOW_LOG_INTERVAL_NANOS) {
			this.shadowLogged.put(decision.limitName(), now);
			logger.log(System.Logger.Level.INFO, "Shadow limit '" + decision.limitName() + "' on "
					+ call.limited.description() + " would have rejected a call (" + decision
					+ "); logged at most every 10 s per limit");
		}
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

		final List<LimitRequest> enforced = new ArrayList<>(2);

		final List<LimitRequest> checked = new ArrayList<>(0);

		final List<RateLimitOperation> checkedOperations = new ArrayList<>(0);

		final List<LimitRequest> shadow = new ArrayList<>(0);

		Duration maxWait = Duration.ZERO;

		private RateLimitEvaluationContext context;

		Call(RateLimitedMethod limited, Object[] args, Object target, Class<?> targetClass, Caller caller) {
			this.limited = limited;
			this.args = args;
			this.target = target;
			this.targetClass = targetClass;
			this.caller = caller;
			for (RateLimitOperation operation : limited.operations()) {
				LimitRequest request;
				try {
					request = new LimitRequest(operation.limit(), key(operation), operation.cost());
				}
				catch (IllegalArgumentException ex) {
					// A key from request data that is too long: the caller's input, not a server error.
					throw new RateLimitKeyException(ex.getMessage() + " (key '" + operation.keyExpression() + "' on "
							+ limited.description() + ")");
				}
				if (operation.failuresOnly()) {
					this.checked.add(request);
					this.checkedOperations.add(operation);
				}
				else if (operation.shadow()) {
					this.shadow.add(request);
				}
				else {
					this.enforced.add(request);
					if (operation.maxWait().compareTo(this.maxWait) > 0) {
						this.maxWait = operation.maxWait();
					}
				}
			}
		}

		private String key(RateLimitOperation operation) {
			Expression expression = operation.parsedKeyExpression();
			if (expression == null) {
				return "";
			}
			int argument = operation.keyArgument();
			Object value = (argument >= 0) ? ((argument < this.args.length) ? this.args[argument] : null)
					: expression.getValue(context(RateLimitInterceptor.this.beanResolver));
			String key = (value != null) ? value.toString() : "";
			if (key.isEmpty() && RateLimitInterceptor.this.properties.getEmptyKey() == RateLimiterProperties.EmptyKey.REJECT) {
				throw new RateLimitKeyException("The key '" + operation.keyExpression() + "' of limit '"
						+ operation.limit().name() + "' on " + this.limited.description() + " evaluated to "
						+ ((value == null) ? "null" : "an empty string"));
			}
			return key;
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
