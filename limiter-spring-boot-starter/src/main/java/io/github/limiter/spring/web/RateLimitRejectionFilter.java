package io.github.limiter.spring.web;

import java.io.IOException;
import java.nio.charset.StandardCharsets;

import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;

import org.springframework.core.Ordered;
import org.springframework.http.MediaType;

/**
 * Answers with the limiter's 429 (or its 400 for a key that cannot be used) a refusal that no handler's exception
 * handling saw: one thrown by a limited method that a filter calls, such as a {@code UserDetailsService} called from
 * Spring Security's filter chain. Without it the servlet container answers such a refusal with a 500.
 *
 * <p>Ordered {@link #ORDER just after} the filter that observes the request, so that the observation records the
 * 429, and before every filter that may call a limited method. A refusal inside a handler never reaches it: the
 * handler's exception handling ({@link RateLimitExceptionHandler}) answers it first. A response already committed
 * cannot be answered again, and its refusal is left to the container.
 */
public class RateLimitRejectionFilter implements Filter, Ordered {

	/**
	 * This filter's order: after Spring Boot's observation filter ({@code HIGHEST_PRECEDENCE + 1}), before Spring
	 * Security's chain ({@code -100}) and every filter of a lower precedence.
	 */
	public static final int ORDER = Ordered.HIGHEST_PRECEDENCE + 10;

	private static final System.Logger logger = System.getLogger(RateLimitRejectionFilter.class.getName());

	@Override
	public void doFilter(ServletRequest request, ServletResponse response, FilterChain chain)
			throws IOException, ServletException {
		try {
			chain.doFilter(request, response);
		}
		catch (IOException | ServletException | RuntimeException failure) {
			RateLimitAnswer answer = RateLimitAnswer.of(failure);
			if (answer == null || !(request instanceof HttpServletRequest httpRequest)
					|| !(response instanceof HttpServletResponse httpResponse) || httpResponse.isCommitted()) {
				throw failure;
			}
			logger.log(System.Logger.Level.DEBUG, () -> "Answered " + answer.status().value() + " for a refusal "
					+ "outside any handler, on " + httpRequest.getRequestURI() + ": " + failure);
			write(answer, httpRequest, httpResponse);
		}
	}

	private static void write(RateLimitAnswer answer, HttpServletRequest request, HttpServletResponse response)
			throws IOException {
		response.resetBuffer();
		response.setStatus(answer.status().value());
		answer.headers().forEach(response::setHeader);
		response.setContentType(MediaType.APPLICATION_PROBLEM_JSON_VALUE);
		response.setCharacterEncoding(StandardCharsets.UTF_8.name());
		// ASCII, so as many bytes as characters in any charset the writer may have been opened with.
		String body = answer.json(request.getRequestURI());
		response.setContentLength(body.length());
		try {
			response.getOutputStream().write(body.getBytes(StandardCharsets.US_ASCII));
		}
		catch (IllegalStateException writerTaken) {
			// The code that failed had asked for the writer: the body goes through it instead.
			response.getWriter().write(body);
		}
		response.flushBuffer();
	}

	@Override
	public int getOrder() {
		return ORDER;
	}

}
