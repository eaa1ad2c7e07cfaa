package io.github.limiter.spring.interceptor;

import java.lang.reflect.Method;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletionStage;

import org.springframework.core.ReactiveAdapterRegistry;
import org.springframework.core.annotation.MergedAnnotations;
import org.springframework.util.ClassUtils;

import io.github.limiter.algorithm.LeakyBucket;

/**
 * Everything the interceptor needs to limit one method of one target class, built once: its operations (one per
 * {@code @RateLimit}, decided together) and its fallback.
 */
public final class RateLimitedMethod {

	private final Method method;

	private final Class<?> targetClass;

	private final List<RateLimitOperation> operations;

	/** The names of the limits whose annotation has no name. */
	private final Set<String> unnamed;

	private final FallbackMethod fallback;

	private final String[] parameterNames;

	private final Shape shape;

	private final boolean mayWait;

	private final int enforced;

	private final int checked;

	private final int shadowed;

	private final Duration maxWait;

	private final boolean usesCaller;

	RateLimitedMethod(Method method, Class<?> targetClass, List<RateLimitOperation> operations, Set<String> unnamed,
			FallbackMethod fallback, String[] parameterNames) {
		this.method = method;
		this.targetClass = targetClass;
		this.operations = List.copyOf(operations);
		this.unnamed = Set.copyOf(unnamed);
		this.fallback = fallback;
		this.parameterNames = parameterNames;
		this.shape = Shape.of(method, targetClass);
		this.mayWait = this.operations.stream()
			.anyMatch(operation -> !operation.maxWait().isZero() || (operation.limit() instanceof LeakyBucket bucket
					&& !bucket.nodelay() && bucket.capacity() > 1));
		this.checked = (int) this.operations.stream().filter(RateLimitOperation::failuresOnly).count();
		this.shadowed = (int) this.operations.stream().filter(op -> !op.failuresOnly() && op.shadow()).count();
		this.enforced = this.operations.size() - this.checked - this.shadowed;
		this.maxWait = this.operations.stream()
			.filter(op -> !op.failuresOnly() && !op.shadow())
			.map(RateLimitOperation::maxWait)
			.max(Duration::compareTo)
			.orElse(Duration.ZERO);
		this.usesCaller = mayHandleRequests(method, targetClass) || this.operations.stream()
			.anyMatch(op -> RateLimitAnnotationParser.usesCaller(op.parsedKeyExpression())
					|| RateLimitAnnotationParser.usesCaller(op.recordIf())
					|| RateLimitAnnotationParser.usesCaller(op.condition()));
	}

	/**
	 * Whether the method may be a web request's handler: on a {@code @Controller}, or mapped by
	 * {@code @RequestMapping} (read by name: spring-web may be absent).
	 */
	private static boolean mayHandleRequests(Method method, Class<?> targetClass) {
		Class<?> type = (targetClass != null) ? ClassUtils.getUserClass(targetClass) : method.getDeclaringClass();
		MergedAnnotations onType = MergedAnnotations.from(type, MergedAnnotations.SearchStrategy.TYPE_HIERARCHY);
		return onType.isPresent("org.springframework.stereotype.Controller")
				|| onType.isPresent("org.springframework.web.bind.annotation.RequestMapping")
				|| MergedAnnotations.from(method, MergedAnnotations.SearchStrategy.TYPE_HIERARCHY)
					.isPresent("org.springframework.web.bind.annotation.RequestMapping");
	}

	/** How a method's result is produced, which decides how its call waits for a decision. */
	enum Shape {

		/** A plain value: the calling thread waits for the decision (never an event-loop thread). */
		PLAIN,

		/** A {@code CompletionStage}: the method runs once the decision arrives, in the caller's context. */
		STAGE,

		/**
		 * The {@code CompletionStage} of an {@code @Async} method. The call already runs on the async executor's
		 * thread, where Spring's async interceptor waits for the stage that the rest of the call returns: the
		 * decision is awaited there and the method runs there. Handed to the continuation executor (by default the
		 * same pool), the method would queue behind the very threads that wait for it, and a full pool would wait
		 * for ever. Called on a non-blocking thread (async execution not enabled), it is taken as a {@link #STAGE};
		 * on any other thread it waits there, as a plain method does.
		 */
		ASYNC_STAGE,

		/** A reactive type known to Spring's {@code ReactiveAdapterRegistry}: decided when subscribed. */
		REACTIVE;

		private static final boolean REACTOR_PRESENT = ClassUtils.isPresent("reactor.core.publisher.Mono",
				Shape.class.getClassLoader());

		/** Spring's async support runs methods with these on an executor (EJB's when it is present). */
		private static final List<String> ASYNC_ANNOTATIONS = List.of("org.springframework.scheduling.annotation.Async",
				"jakarta.ejb.Asynchronous");

		static Shape of(Method method, Class<?> targetClass) {
			Class<?> returnType = method.getReturnType();
			if (CompletionStage.class.isAssignableFrom(returnType)) {
				return runsAsync(method, targetClass) ? ASYNC_STAGE : STAGE;
			}
			if (REACTOR_PRESENT && ReactiveAdapterRegistry.getSharedInstance().getAdapter(returnType) != null) {
				return REACTIVE;
			}
			return PLAIN;
		}

		/**
		 * Whether Spring's async support runs the method on an executor: {@code @Async} (or EJB's
		 * {@code @Asynchronous}, which Spring also honours) on the method or on its class, read by name.
		 */
		private static boolean runsAsync(Method method, Class<?> targetClass) {
			Class<?> type = (targetClass != null) ? ClassUtils.getUserClass(targetClass) : method.getDeclaringClass();
			for (String async : ASYNC_ANNOTATIONS) {
				if (MergedAnnotations.from(method, MergedAnnotations.SearchStrategy.TYPE_HIERARCHY).isPresent(async)
						|| MergedAnnotations.from(type, MergedAnnotations.SearchStrategy.TYPE_HIERARCHY).isPresent(async)) {
					return true;
				}
			}
			return false;
		}

	}

	Shape shape() {
		return this.shape;
	}

	/** Whether an admitted call may have to wait: a {@code maxWait}, or a leaky bucket that queues. */
	boolean mayWait() {
		return this.mayWait;
	}

	/**
	 * Whether a call needs its {@link io.github.limiter.spring.web.Caller}: the method may be a request's handler
	 * (whose response the fields describe), or an expression reads {@code #ip}, {@code #request} or
	 * {@code #principal}. Other calls look nothing up.
	 */
	boolean usesCaller() {
		return this.usesCaller;
	}

	/** Number of enforced limits: acquired before the call. */
	int enforced() {
		return this.enforced;
	}

	/** Number of limits that count only failures: reserved before the call, given back unless it failed. */
	int checked() {
		return this.checked;
	}

	/** Number of shadow limits: decided and counted, never enforced. */
	int shadowed() {
		return this.shadowed;
	}

	/** The longest {@code maxWait} of the enforced limits, which the call waits for them together. */
	Duration maxWait() {
		return this.maxWait;
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

	/**
	 * The class whose bean this method limits, as the default names read it.
	 * @return the user class (not a proxy's; an interface for a generated class's bean)
	 */
	Class<?> userClass() {
		return RateLimitAnnotationParser.namingClass(this.method, this.targetClass);
	}

	/**
	 * An identity that no other method shares: {@code fully.qualified.Class.method(fully.qualified.Types)}.
	 * @return the qualified name
	 */
	String qualifiedName() {
		return userClass().getName() + "." + this.method.getName() + RateLimitAnnotationParser.parameterList(this.method, false);
	}

	/**
	 * Whether a limit of this method is named by default, its annotation having no name.
	 * @param name the limit's name
	 * @return whether this method gave the limit its default name
	 */
	boolean hasDefaultName(String name) {
		return this.unnamed.contains(name);
	}

	@Override
	public String toString() {
		return description() + " " + this.operations;
	}

}
