package io.github.limiter.spring.web;

import java.lang.reflect.Method;

import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.springframework.web.context.request.RequestAttributes;
import org.springframework.web.context.request.RequestContextHolder;
import org.springframework.web.context.request.ServletRequestAttributes;
import org.springframework.web.method.HandlerMethod;
import org.springframework.web.servlet.HandlerMapping;

/**
 * The servlet request and response of the current thread. Loaded only when the servlet API is present.
 */
final class ServletCalls {

	private ServletCalls() {
	}

	static HttpServletRequest request() {
		RequestAttributes attributes = RequestContextHolder.getRequestAttributes();
		return (attributes instanceof ServletRequestAttributes servlet) ? servlet.getRequest() : null;
	}

	static HttpServletResponse response() {
		RequestAttributes attributes = RequestContextHolder.getRequestAttributes();
		return (attributes instanceof ServletRequestAttributes servlet) ? servlet.getResponse() : null;
	}

	/** The handler method Spring MVC chose for a request, or {@code null}. Loaded only with Spring MVC. */
	static Method handlerMethod(HttpServletRequest request) {
		Object handler = request.getAttribute(HandlerMapping.BEST_MATCHING_HANDLER_ATTRIBUTE);
		return (handler instanceof HandlerMethod method) ? method.getMethod() : null;
	}

	/**
	 * Sets a field on the current response, replacing any value, unless there is no servlet request on this thread.
	 * @return whether there was a response to set it on
	 */
	static boolean replaceHeader(String name, String value) {
		HttpServletResponse response = response();
		if (response == null) {
			return false;
		}
		if (!response.isCommitted()) {
			response.setHeader(name, value);
		}
		return true;
	}

}
