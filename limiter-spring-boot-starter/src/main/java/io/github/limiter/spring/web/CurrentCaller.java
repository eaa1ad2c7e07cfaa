package io.github.limiter.spring.web;

import java.security.Principal;

import org.springframework.util.ClassUtils;

/**
 * Finds the caller of the current thread: its servlet request when there is one, otherwise only the thread's
 * authenticated principal. Loads the servlet and Spring Security classes only when they are present.
 */
final class CurrentCaller {

	private static final ClassLoader LOADER = CurrentCaller.class.getClassLoader();

	private static final boolean SERVLET_PRESENT = ClassUtils.isPresent("jakarta.servlet.http.HttpServletRequest", LOADER)
			&& ClassUtils.isPresent("org.springframework.web.context.request.RequestContextHolder", LOADER);

	private static final boolean SECURITY_PRESENT = ClassUtils
		.isPresent("org.springframework.security.core.context.SecurityContextHolder", LOADER);

	/** A call outside a servlet request. */
	static final Caller THREAD = new Caller() {

		@Override
		public String ip() {
			return null;
		}

		@Override
		public Object request() {
			return null;
		}

		@Override
		public Principal principal() {
			return securityPrincipal();
		}

	};

	private CurrentCaller() {
	}

	static Caller get() {
		Caller servlet = SERVLET_PRESENT ? ServletCaller.current() : null;
		return (servlet != null) ? servlet : THREAD;
	}

	/** Spring Security's authentication when present, authenticated and not anonymous. */
	static Principal securityPrincipal() {
		return SECURITY_PRESENT ? SecurityPrincipals.current() : null;
	}

	/**
	 * A request's principal as a limit keys it: none for Spring Security's anonymous or unauthenticated tokens.
	 * @param principal the principal, or {@code null}
	 * @return the principal, or {@code null}
	 */
	static Principal authenticated(Principal principal) {
		return SECURITY_PRESENT ? SecurityPrincipals.authenticated(principal) : principal;
	}

}
