package io.github.limiter.spring.web;

import java.lang.reflect.Method;
import java.security.Principal;
import java.util.List;

import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.springframework.util.ClassUtils;

import io.github.limiter.Decision;
import io.github.limiter.LimitRequest;

/**
 * The caller of a servlet request, bound to that request when the call begins, so that a decision arriving on
 * another thread still finds its response. Loaded only when the servlet API is present.
 *
 * <p>The client IP is the request's remote address, after the servlet container and Spring applied
 * {@code server.forward-headers-strategy}: which proxies are trusted is their decision, and a raw
 * {@code X-Forwarded-For} header sent by a client is never read here.
 */
final class ServletCaller implements Caller {

	private static final boolean MVC_PRESENT = ClassUtils.isPresent("org.springframework.web.servlet.HandlerMapping",
			ServletCaller.class.getClassLoader());

	private final HttpServletRequest request;

	private final HttpServletResponse response;

	private ServletCaller(HttpServletRequest request, HttpServletResponse response) {
		this.request = request;
		this.response = response;
	}

	/** The caller of the current thread's servlet request, or {@code null} outside one. */
	static Caller current() {
		HttpServletRequest request = ServletCalls.request();
		return (request != null) ? new ServletCaller(request, ServletCalls.response()) : null;
	}

	@Override
	public String ip() {
		return this.request.getRemoteAddr();
	}

	@Override
	public Object request() {
		return this.request;
	}

	/**
	 * Spring Security's authentication when present and not anonymous, otherwise the request's user principal.
	 */
	@Override
	public Principal principal() {
		Principal principal = CurrentCaller.securityPrincipal();
		return (principal != null) ? principal : this.request.getUserPrincipal();
	}

	@Override
	public boolean handles(Method method) {
		Method handler = MVC_PRESENT ? ServletCalls.handlerMethod(this.request) : null;
		return handler != null && Caller.sameMethod(handler, method);
	}

	@Override
	public void describe(Decision decision, List<LimitRequest> requests) {
		if (this.response != null && !this.response.isCommitted()) {
			this.response.setHeader(RateLimitHeaders.POLICY, RateLimitHeaders.policy(decision, requests));
			this.response.setHeader(RateLimitHeaders.RATE_LIMIT, RateLimitHeaders.rateLimit(decision, requests));
		}
	}

}
