package io.github.limiter.spring.web;

import java.security.Principal;

import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.springframework.web.context.request.RequestAttributes;
import org.springframework.web.context.request.RequestContextHolder;
import org.springframework.web.context.request.ServletRequestAttributes;

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

	static String remoteAddress() {
		HttpServletRequest request = request();
		return (request != null) ? request.getRemoteAddr() : null;
	}

	static Principal userPrincipal() {
		HttpServletRequest request = request();
		return (request != null) ? request.getUserPrincipal() : null;
	}

	static void setHeader(String name, String value) {
		HttpServletResponse response = response();
		if (response != null && !response.isCommitted()) {
			response.setHeader(name, value);
		}
	}

}
