package io.github.limiter.spring.web;

import java.lang.reflect.Method;
import java.security.Principal;
import java.util.List;

import io.github.limiter.Decision;
import io.github.limiter.LimitRequest;

/**
 * Who is calling, as key expressions see it through {@code #ip}, {@code #request} and {@code #principal}, and the
 * response the limits of the request's handler describe.
 */
public interface Caller {

	/** Key of a {@code Mono<Caller>} in the Reactor context of a request, put there by a web filter. */
	String CONTEXT_KEY = Caller.class.getName();

	/**
	 * The caller of the servlet request on the current thread, bound to that request; outside one, the thread's
	 * authenticated principal only.
	 * @return the caller
	 */
	static Caller current() {
		return CurrentCaller.get();
	}

	/**
	 * A caller that looks nothing up: no request, no handler, and the thread's principal only if asked. For methods
	 * that are no request handler and whose expressions use none of {@code #ip}, {@code #request},
	 * {@code #principal}, so that limiting them costs no lookup of the request.
	 * @return the caller
	 */
	static Caller unbound() {
		return CurrentCaller.THREAD;
	}

	/**
	 * The client's address as the server sees it.
	 * @return the address, or {@code null}
	 */
	String ip();

	/**
	 * The request ({@code HttpServletRequest} or {@code ServerHttpRequest}).
	 * @return the request, or {@code null}
	 */
	Object request();

	/**
	 * The authenticated principal.
	 * @return the principal, or {@code null}
	 */
	Principal principal();

	/**
	 * Whether the method is the handler of the request, whose limits the response's {@code RateLimit} fields
	 * describe. A limited service called by the handler is not.
	 * @param method the limited method
	 * @return {@code true} for the request's handler method
	 */
	default boolean handles(Method method) {
		return false;
	}

	/**
	 * Sets the response's {@code RateLimit-Policy} and {@code RateLimit} fields from a decision of the handler's
	 * limits, if the response is not committed yet.
	 * @param decision the decision
	 * @param requests the limits decided, in the order of the decision's parts
	 */
	default void describe(Decision decision, List<LimitRequest> requests) {
	}

	/**
	 * Whether two methods are the same handler method: equal, or the same signature declared along one class
	 * hierarchy (an interface's mapping implemented by the controller).
	 * @param handler the request's handler method
	 * @param limited the limited method
	 * @return {@code true} when they are the same
	 */
	static boolean sameMethod(Method handler, Method limited) {
		if (handler.equals(limited)) {
			return true;
		}
		return handler.getName().equals(limited.getName())
				&& java.util.Arrays.equals(handler.getParameterTypes(), limited.getParameterTypes())
				&& (handler.getDeclaringClass().isAssignableFrom(limited.getDeclaringClass())
						|| limited.getDeclaringClass().isAssignableFrom(handler.getDeclaringClass()));
	}

}
