package io.github.limiter.spring.interceptor;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;

import org.springframework.expression.Expression;

import io.github.limiter.Limit;
import io.github.limiter.guard.FailurePolicy;

/**
 * One {@code @RateLimit} of a method, resolved once at startup: the limit with every setting from the annotation, its
 * policy and the defaults, the cost, and the parsed key expression.
 */
public final class RateLimitOperation {

	private final Limit limit;

	private final long cost;

	private final String keyExpressionString;

	private final Expression keyExpression;

	private final int keyArgument;

	private final String policy;

	private final FailurePolicy failurePolicy;

	private final Duration maxWait;

	private final boolean shadow;

	private final List<Class<? extends Throwable>> recordOn;

	private final Expression recordIf;

	private final Expression condition;

	private final Map<String, String> sources;

	RateLimitOperation(Limit limit, long cost, String keyExpressionString, Expression keyExpression, int keyArgument,
			String policy, FailurePolicy failurePolicy, Duration maxWait, boolean shadow,
			List<Class<? extends Throwable>> recordOn, Expression recordIf, Expression condition,
			Map<String, String> sources) {
		this.limit = Objects.requireNonNull(limit);
		this.cost = cost;
		this.keyExpressionString = keyExpressionString;
		this.keyExpression = keyExpression;
		this.keyArgument = keyArgument;
		this.policy = policy;
		this.failurePolicy = failurePolicy;
		this.maxWait = maxWait;
		this.shadow = shadow;
		this.recordOn = List.copyOf(recordOn);
		this.recordIf = recordIf;
		this.condition = condition;
		this.sources = java.util.Collections.unmodifiableMap(new java.util.LinkedHashMap<>(sources));
	}

	/**
	 * When the key expression is nothing but one of the method's arguments ({@code #userId}, {@code #p0}), its
	 * position, so that calls read it without evaluating SpEL; otherwise -1.
	 * @return the argument's position, or -1
	 */
	public int keyArgument() {
		return this.keyArgument;
	}

	/**
	 * What decides when the backend cannot answer in time.
	 * @return the failure policy
	 */
	public FailurePolicy failurePolicy() {
		return this.failurePolicy;
	}

	/**
	 * Longest time a call waits for a permit; zero to reject at once.
	 * @return the longest wait
	 */
	public Duration maxWait() {
		return this.maxWait;
	}

	/**
	 * Whether the limit runs in shadow mode (counted, never rejecting).
	 * @return {@code true} in shadow mode
	 */
	public boolean shadow() {
		return this.shadow;
	}

	/**
	 * Where each setting of the limit comes from ({@code attribute 'max'}, {@code limiter.policies.api.window},
	 * {@code limiter.defaults.algorithm}); settings left to their built-in default are absent.
	 * @return the origins, by setting name
	 */
	public Map<String, String> settingSources() {
		return this.sources;
	}

	/**
	 * Whether only failed calls count: reserved before the call, given back unless it failed.
	 * @return {@code true} when {@code recordOn} or {@code recordIf} is set
	 */
	public boolean failuresOnly() {
		return !this.recordOn.isEmpty() || this.recordIf != null;
	}

	/**
	 * Whether a call that threw counts as a failure.
	 * @param failure what the call threw
	 * @return {@code true} to record a permit
	 */
	boolean countsFailure(Throwable failure) {
		for (Class<? extends Throwable> type : this.recordOn) {
			if (type.isInstance(failure)) {
				return true;
			}
		}
		return false;
	}

	/**
	 * The condition on the result that counts a call, or {@code null}.
	 * @return the parsed expression
	 */
	Expression recordIf() {
		return this.recordIf;
	}

	/** Whether the limit applies to a call, or {@code null} when it applies to every call. */
	Expression condition() {
		return this.condition;
	}

	/**
	 * The limit.
	 * @return the limit
	 */
	public Limit limit() {
		return this.limit;
	}

	/**
	 * Permits one call takes.
	 * @return the cost
	 */
	public long cost() {
		return this.cost;
	}

	/**
	 * The key expression as written, empty for one limit for all calls.
	 * @return the expression text
	 */
	public String keyExpression() {
		return this.keyExpressionString;
	}

	/**
	 * The parsed key expression, or {@code null} when the key is empty.
	 * @return the expression or {@code null}
	 */
	Expression parsedKeyExpression() {
		return this.keyExpression;
	}

	/**
	 * The policy name, or empty.
	 * @return the policy
	 */
	public String policy() {
		return this.policy;
	}

	@Override
	public String toString() {
		return this.limit + (this.keyExpressionString.isEmpty() ? "" : " by " + this.keyExpressionString);
	}

}
