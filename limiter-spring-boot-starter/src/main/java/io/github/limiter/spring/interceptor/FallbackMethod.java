package io.github.limiter.spring.interceptor;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.util.Arrays;

import org.springframework.core.ResolvableType;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.util.ReflectionUtils;

import io.github.limiter.RateLimitExceededException;
import io.github.limiter.spring.annotation.RateLimit;
import io.github.limiter.spring.annotation.RateLimits;

/**
 * A method called instead of a rejected one: the same parameters, optionally followed by the
 * {@link RateLimitExceededException}.
 */
public final class FallbackMethod {

	private final Method method;

	private final boolean takesException;

	private FallbackMethod(Method method, boolean takesException) {
		this.method = method;
		this.takesException = takesException;
		ReflectionUtils.makeAccessible(method);
	}

	/**
	 * Finds the fallback of a method.
	 * @param limited the limited method
	 * @param targetClass the class holding both
	 * @param name the fallback's name
	 * @return the fallback
	 * @throws IllegalArgumentException when no method fits, saying why
	 */
	static FallbackMethod find(Method limited, Class<?> targetClass, String name) {
		Class<?>[] parameters = limited.getParameterTypes();
		Class<?>[] withException = Arrays.copyOf(parameters, parameters.length + 1);
		withException[parameters.length] = RateLimitExceededException.class;
		Method plain = ReflectionUtils.findMethod(targetClass, name, parameters);
		Method extended = ReflectionUtils.findMethod(targetClass, name, withException);
		Method found = (extended != null) ? extended : plain;
		if (found == null) {
			throw new IllegalArgumentException("no method " + name + " with the parameters of the limited method "
					+ "(optionally followed by a RateLimitExceededException) in " + targetClass.getName());
		}
		if (found.getName().equals(limited.getName()) && Arrays.equals(found.getParameterTypes(), parameters)) {
			throw new IllegalArgumentException("the fallback is the limited method itself: a rejected call would run it "
					+ "anyway, unlimited; name another method");
		}
		if (!AnnotatedElementUtils.findMergedRepeatableAnnotations(found, RateLimit.class, RateLimits.class).isEmpty()) {
			throw new IllegalArgumentException("method " + name + " has a @RateLimit of its own, which would never apply "
					+ "to it as a fallback: a fallback is called on the bean itself, not through its proxy; move the "
					+ "limited code to another bean, or have both call an unlimited method");
		}
		ResolvableType expected = ResolvableType.forMethodReturnType(limited, targetClass);
		ResolvableType actual = ResolvableType.forMethodReturnType(found, targetClass);
		if (!returnTypeFits(expected, actual)) {
			throw new IllegalArgumentException("method " + name + " returns " + actual
					+ ", which the limited method's return type " + expected + " cannot hold");
		}
		// A stage's or a reactive type's fallback fails its stage or stream; a plain method's throws to its caller.
		Class<?> returned = limited.getReturnType();
		boolean signalled = java.util.concurrent.CompletionStage.class.isAssignableFrom(returned)
				|| org.springframework.core.ReactiveAdapterRegistry.getSharedInstance().getAdapter(returned) != null;
		for (Class<?> thrown : signalled ? new Class<?>[0] : found.getExceptionTypes()) {
			boolean checked = !RuntimeException.class.isAssignableFrom(thrown) && !Error.class.isAssignableFrom(thrown);
			if (checked && Arrays.stream(limited.getExceptionTypes()).noneMatch(type -> type.isAssignableFrom(thrown))) {
				throw new IllegalArgumentException("method " + name + " may throw " + thrown.getName()
						+ ", which the limited method does not declare: its caller would get an "
						+ "UndeclaredThrowableException");
			}
		}
		return new FallbackMethod(found, found == extended);
	}

	/** The class fits (boxing allowed), and so do the type arguments when both are declared: {@code List<String>}. */
	private static boolean returnTypeFits(ResolvableType expected, ResolvableType actual) {
		Class<?> expectedClass = expected.toClass();
		if (expectedClass == void.class) {
			return true;
		}
		if (!org.springframework.util.ClassUtils.isAssignable(expectedClass, actual.toClass())) {
			return false;
		}
		return expectedClass.isPrimitive() || actual.toClass().isPrimitive() || !expected.hasGenerics()
				|| !actual.hasGenerics() || actual.hasUnresolvableGenerics() || expected.isAssignableFrom(actual);
	}

	/**
	 * The fallback method.
	 * @return the method
	 */
	public Method method() {
		return this.method;
	}

	Object invoke(Object target, Object[] args, RateLimitExceededException rejection) throws Throwable {
		Object[] fallbackArgs = args;
		if (this.takesException) {
			fallbackArgs = Arrays.copyOf(args, args.length + 1);
			fallbackArgs[args.length] = rejection;
		}
		try {
			return this.method.invoke(target, fallbackArgs);
		}
		catch (InvocationTargetException ex) {
			throw ex.getTargetException();
		}
	}

}
