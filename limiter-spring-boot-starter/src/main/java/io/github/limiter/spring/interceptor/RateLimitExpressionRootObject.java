package io.github.limiter.spring.interceptor;

import java.lang.reflect.Method;

/**
 * The root object of key expressions: {@code #root.method}, {@code #root.args}, {@code #root.target}.
 *
 * @param method the method called
 * @param args the arguments
 * @param target the target object
 * @param targetClass the target class
 */
public record RateLimitExpressionRootObject(Method method, Object[] args, Object target, Class<?> targetClass) {

	/**
	 * The method name.
	 * @return the name
	 */
	public String methodName() {
		return this.method.getName();
	}

}
