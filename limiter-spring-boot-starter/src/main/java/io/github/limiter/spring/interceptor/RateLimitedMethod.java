package io.github.limiter.spring.interceptor;

import java.lang.reflect.Method;
import java.util.List;

/**
 * Everything the interceptor needs to limit one method of one target class, built once: its operations (one per
 * {@code @RateLimit}, decided together) and its fallback.
 */
public final class RateLimitedMethod {

	private final Method method;

	private final Class<?> targetClass;

	private final List<RateLimitOperation> operations;

	private final FallbackMethod fallback;

	private final String[] parameterNames;

	RateLimitedMethod(Method method, Class<?> targetClass, List<RateLimitOperation> operations, FallbackMethod fallback,
			String[] parameterNames) {
		this.method = method;
		this.targetClass = targetClass;
		this.operations = List.copyOf(operations);
		this.fallback = fallback;
		this.parameterNames = parameterNames;
	}

	/**
	 * The method.
	 * @return the method
	 */
	public Method method() {
		return this.method;
	}

	/**
	 * The class whose instances are limited.
	 * @return the target class
	 */
	public Class<?> targetClass() {
		return this.targetClass;
	}

	/**
	 * The limits, decided together.
	 * @return the operations
	 */
	public List<RateLimitOperation> operations() {
		return this.operations;
	}

	/**
	 * The fallback, or {@code null}.
	 * @return the fallback
	 */
	public FallbackMethod fallback() {
		return this.fallback;
	}

	/** Parameter names for key expressions, or {@code null} when compiled without {@code -parameters}. */
	String[] parameterNames() {
		return this.parameterNames;
	}

	/**
	 * A readable identity: {@code SimpleClassName.method(ParameterTypes)}.
	 * @return the description
	 */
	public String description() {
		return RateLimitAnnotationParser.describe(this.method, this.targetClass);
	}

	@Override
	public String toString() {
		return description() + " " + this.operations;
	}

}
