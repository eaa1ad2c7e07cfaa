package io.github.limiter.spring.web;

import java.security.Principal;

import org.springframework.util.ClassUtils;

/**
 * Who is calling, for key expressions: the current HTTP request, the client IP and the authenticated principal. Each
 * is {@code null} outside a web request (or without Spring Security, for the principal's security context).
 *
 * <p>The client IP is the request's remote address, after the servlet container and Spring applied
 * {@code server.forward-headers-strategy}: which proxies are trusted is their decision, and a raw
 * {@code X-Forwarded-For} header sent by a client is never read here.
 */
public final class CallerContext {

	private static final boolean SERVLET_PRESENT = ClassUtils.isPresent("jakarta.servlet.http.HttpServletRequest",
			CallerContext.class.getClassLoader())
			&& ClassUtils.isPresent("org.springframework.web.context.request.RequestContextHolder",
					CallerContext.class.getClassLoader());

	private static final boolean SECURITY_PRESENT = ClassUtils.isPresent(
			"org.springframework.security.core.context.SecurityContextHolder", CallerContext.class.getClassLoader());

	private CallerContext() {
	}

	/**
	 * The current servlet request.
	 * @return the request, or {@code null}
	 */
	public static Object request() {
		return SERVLET_PRESENT ? ServletCalls.request() : null;
	}

	/**
	 * The client's address as the server sees it.
	 * @return the IP address, or {@code null} outside a web request
	 */
	public static String clientIp() {
		return SERVLET_PRESENT ? ServletCalls.remoteAddress() : null;
	}

	/**
	 * The authenticated principal: Spring Security's authentication when present and not anonymous, otherwise the
	 * request's user principal.
	 * @return the principal, or {@code null}
	 */
	public static Principal principal() {
		if (SECURITY_PRESENT) {
			Principal principal = SecurityPrincipals.current();
			if (principal != null) {
				return principal;
			}
		}
		return SERVLET_PRESENT ? ServletCalls.userPrincipal() : null;
	}

}
