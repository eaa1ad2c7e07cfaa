package io.github.limiter.spring.interceptor;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;
import org.springframework.aop.support.AopUtils;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.context.expression.BeanFactoryResolver;
import org.springframework.expression.Expression;

import io.github.limiter.Decision;
import io.github.limiter.LimitRequest;
import io.github.limiter.Operation;
import io.github.limiter.RateLimitExceededException;
import io.github.limiter.RateLimiter;
import io.github.limiter.spring.autoconfigure.RateLimiterProperties;
import io.github.limiter.spring.web.RateLimitHeaders;

/**
 * Limits calls to methods annotated with {@code @RateLimit}: resolves the keys, asks the rate limiter, and proceeds,
 * calls the fallback or throws {@link RateLimitExceededException}.
 *
 * <p>Per call it only evaluates the already parsed key expressions and makes one decision; everything else was
 * resolved when the method was first seen.
 */
public class RateLimitInterceptor implements MethodInterceptor {

	private final RateLimitOperationSource source;

	private final Supplier<RateLimiter> rateLimiter;

	private final RateLimiterProperties properties;

	private final BeanFactoryResolver beanResolver;

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
		Object[] args = invocation.getArguments();
		List<LimitRequest> requests = requests(limited, args, target, targetClass);
		Decision decision = this.rateLimiter.get().decide(requests, Operation.ACQUIRE);
		if (this.properties.getHeaders().isEnabled() && (decision.allowed() || limited.fallback() != null)) {
			RateLimitHeaders.addToCurrentResponse(decision, requests);
		}
		if (!decision.allowed()) {
			RateLimitExceededException rejection = new RateLimitExceededException(decision, requests);
			if (limited.fallback() != null) {
				return limited.fallback().invoke(target, args, rejection);
			}
			throw rejection;
		}
		if (decision.delayMicros() > 0) {
			// A queueing leaky bucket admitted the call on condition that it waits for its turn.
			TimeUnit.MICROSECONDS.sleep(decision.delayMicros());
		}
		return invocation.proceed();
	}

	/**
	 * The limit requests of one call: each operation's key evaluated against the arguments.
	 * @param limited the limited method
	 * @param args the arguments
	 * @param target the target object
	 * @param targetClass the target class
	 * @return one request per operation
	 */
	List<LimitRequest> requests(RateLimitedMethod limited, Object[] args, Object target, Class<?> targetClass) {
		List<RateLimitOperation> operations = limited.operations();
		List<LimitRequest> requests = new ArrayList<>(operations.size());
		RateLimitEvaluationContext context = null;
		for (RateLimitOperation operation : operations) {
			Expression expression = operation.parsedKeyExpression();
			String key = "";
			if (expression != null) {
				if (context == null) {
					context = new RateLimitEvaluationContext(
							new RateLimitExpressionRootObject(limited.method(), args, target, targetClass),
							limited.parameterNames(), args);
					if (this.beanResolver != null) {
						context.setBeanResolver(this.beanResolver);
					}
				}
				key = key(operation, expression.getValue(context), limited);
			}
			requests.add(new LimitRequest(operation.limit(), key, operation.cost()));
		}
		return requests;
	}

	private String key(RateLimitOperation operation, Object value, RateLimitedMethod limited) {
		String key = (value != null) ? value.toString() : "";
		if (key.isEmpty() && this.properties.getEmptyKey() == RateLimiterProperties.EmptyKey.REJECT) {
			throw new RateLimitKeyException("The key '" + operation.keyExpression() + "' of limit '"
					+ operation.limit().name() + "' on " + limited.description() + " evaluated to "
					+ ((value == null) ? "null" : "an empty string"));
		}
		return key;
	}

}
