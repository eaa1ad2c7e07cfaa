package io.github.limiter.spring.interceptor;

import java.util.Map;
import java.util.function.Consumer;
import java.util.function.Supplier;

import io.micrometer.context.ContextSnapshotFactory;
import org.slf4j.MDC;
import org.springframework.security.core.context.SecurityContext;
import org.springframework.security.core.context.SecurityContextHolder;
import org.springframework.util.ClassUtils;
import org.springframework.web.context.request.RequestAttributes;
import org.springframework.web.context.request.RequestContextHolder;

/**
 * Carries the thread-bound context of a call to the thread where its method runs after an asynchronous decision:
 * Spring's request attributes, Spring Security's context and SLF4J's MDC, each when on the classpath, and everything
 * registered with Micrometer's context-propagation when that is present. So a limited method sees the same context
 * whether its decision was made at once (local backend) or arrived later from Redis.
 */
final class ThreadContexts {

	private static final ClassLoader LOADER = ThreadContexts.class.getClassLoader();

	private static final boolean WEB = ClassUtils.isPresent("org.springframework.web.context.request.RequestContextHolder",
			LOADER);

	private static final boolean SECURITY = ClassUtils
		.isPresent("org.springframework.security.core.context.SecurityContextHolder", LOADER);

	private static final boolean MDC_PRESENT = ClassUtils.isPresent("org.slf4j.MDC", LOADER);

	private static final boolean MICROMETER = ClassUtils.isPresent("io.micrometer.context.ContextSnapshotFactory", LOADER);

	private ThreadContexts() {
	}

	/**
	 * Captures the current thread's context and returns the task that runs with it on another thread, restoring
	 * that thread's own context afterwards.
	 * @param task the task
	 * @return the task in the captured context
	 */
	static Runnable wrap(Runnable task) {
		Runnable wrapped = task;
		if (MICROMETER) {
			wrapped = Micrometer.wrap(wrapped);
		}
		if (MDC_PRESENT) {
			wrapped = Mdc.wrap(wrapped);
		}
		if (SECURITY) {
			wrapped = Security.wrap(wrapped);
		}
		if (WEB) {
			wrapped = Web.wrap(wrapped);
		}
		return wrapped;
	}

	/** Runs the task with a value set on the thread, then puts the thread's own value back. */
	private static <T> Runnable with(Runnable task, T captured, Supplier<T> current, Consumer<T> set) {
		return () -> {
			T previous = current.get();
			set.accept(captured);
			try {
				task.run();
			}
			finally {
				set.accept(previous);
			}
		};
	}

	private static final class Web {

		static Runnable wrap(Runnable task) {
			RequestAttributes captured = RequestContextHolder.getRequestAttributes();
			return (captured != null) ? with(task, captured, RequestContextHolder::getRequestAttributes,
					RequestContextHolder::setRequestAttributes) : task;
		}

	}

	private static final class Security {

		static Runnable wrap(Runnable task) {
			return with(task, SecurityContextHolder.getContext(), SecurityContextHolder::getContext,
					SecurityContextHolder::setContext);
		}

	}

	private static final class Mdc {

		static Runnable wrap(Runnable task) {
			return with(task, MDC.getCopyOfContextMap(), MDC::getCopyOfContextMap, Mdc::set);
		}

		private static void set(Map<String, String> context) {
			if (context != null) {
				MDC.setContextMap(context);
			}
			else {
				MDC.clear();
			}
		}

	}

	private static final class Micrometer {

		private static final ContextSnapshotFactory SNAPSHOTS = ContextSnapshotFactory.builder().build();

		static Runnable wrap(Runnable task) {
			return SNAPSHOTS.captureAll().wrap(task);
		}

	}

}
