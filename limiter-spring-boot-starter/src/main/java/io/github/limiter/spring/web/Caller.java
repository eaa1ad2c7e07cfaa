package io.github.limiter.spring.web;

import java.security.Principal;

/**
 * Who is calling, as key expressions see it through {@code #ip}, {@code #request} and {@code #principal}.
 */
public interface Caller {

	/** The caller of a servlet request on the current thread (or nobody outside a request). */
	Caller SERVLET = new Caller() {

		@Override
		public String ip() {
			return CallerContext.clientIp();
		}

		@Override
		public Object request() {
			return CallerContext.request();
		}

		@Override
		public Principal principal() {
			return CallerContext.principal();
		}

	};

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

}
