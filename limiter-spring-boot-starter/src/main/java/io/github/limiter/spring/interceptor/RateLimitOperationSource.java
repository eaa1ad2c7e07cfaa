package io.github.limiter.spring.interceptor;

import java.lang.reflect.Method;
import java.util.Collection;

/**
 * Where the interceptor finds the limits of a method.
 */
public interface RateLimitOperationSource {

	/**
	 * Whether instances of the class may have limited methods; {@code false} lets the pointcut skip the class.
	 * @param targetClass a bean class
	 * @return {@code false} when no method of the class is limited
	 */
	boolean isCandidateClass(Class<?> targetClass);

	/**
	 * The limits of a method, built and validated on first use and cached.
	 * @param method the method called
	 * @param targetClass the class of the target object
	 * @return the limited method, or {@code null} when the method is not limited
	 */
	RateLimitedMethod getRateLimitedMethod(Method method, Class<?> targetClass);

	/**
	 * Every limited method found so far (every method of every proxied bean, once the context has started).
	 * @return the limited methods
	 */
	Collection<RateLimitedMethod> rateLimitedMethods();

	/**
	 * The failure policy of a limit found so far.
	 * @param limitName the limit's name
	 * @return the policy, or {@code null} for a limit no annotation declares
	 */
	io.github.limiter.guard.FailurePolicy failurePolicy(String limitName);

}
