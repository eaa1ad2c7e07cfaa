package io.github.limiter.spring.interceptor;

import java.util.Objects;

import org.springframework.expression.Expression;

import io.github.limiter.Limit;

/**
 * One {@code @RateLimit} of a method, resolved once at startup: the limit with every setting from the annotation, its
 * policy and the defaults, the cost, and the parsed key expression.
 */
public final class RateLimitOperation {

	private final Limit limit;

	private final long cost;

	private final String keyExpressionString;

	private final Expression keyExpression;

	private final String policy;

	RateLimitOperation(Limit limit, long cost, String keyExpressionString, Expression keyExpression, String policy) {
		this.limit = Objects.requireNonNull(limit);
		this.cost = cost;
		this.keyExpressionString = keyExpressionString;
		this.keyExpression = keyExpression;
		this.policy = policy;
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
