package io.github.limiter.spring.web;

import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;
import org.springframework.http.HttpHeaders;
import org.springframework.http.MediaType;
import org.springframework.http.ProblemDetail;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.ControllerAdvice;
import org.springframework.web.bind.annotation.ExceptionHandler;

import io.github.limiter.RateLimitExceededException;
import io.github.limiter.spring.interceptor.RateLimitKeyException;

/**
 * Answers a rejected call to a Spring MVC or WebFlux handler with {@code 429 Too Many Requests}: an RFC 9457 problem
 * body, {@code Retry-After}, {@code RateLimit-Policy} and {@code RateLimit}.
 *
 * <p>Registered by auto-configuration just before the lowest precedence, so that it wins over an application's
 * catch-all handler; an application replaces it by declaring its own bean of this type or a handler of higher
 * precedence. A refusal thrown where no handler's exception handling sees it (a filter, a WebFlux functional
 * endpoint) gets the same answer from {@link RateLimitRejectionFilter} or {@link RateLimitWebExceptionHandler}.
 */
@ControllerAdvice
@Order(Ordered.LOWEST_PRECEDENCE - 1)
public class RateLimitExceptionHandler {

	/**
	 * The 429 answer.
	 * @param exception the rejection
	 * @return the response
	 */
	@ExceptionHandler(RateLimitExceededException.class)
	public ResponseEntity<ProblemDetail> tooManyRequests(RateLimitExceededException exception) {
		RateLimitAnswer answer = RateLimitAnswer.tooManyRequests(exception);
		ResponseEntity.BodyBuilder response = ResponseEntity.status(answer.status());
		// The fields describe the limit that rejected the request. On a servlet response they replace those of an
		// admitted handler; a reactive response gets them here, and the handler's are then not added.
		boolean replaced = RateLimitHeaders.replaceOnServletResponse(exception.getDecision(), exception.getRequests());
		answer.headers().forEach((name, value) -> {
			if (!replaced || name.equals(HttpHeaders.RETRY_AFTER)) {
				response.header(name, value);
			}
		});
		return response.contentType(MediaType.APPLICATION_PROBLEM_JSON)
			.body(answer.problem());
	}

	/**
	 * The answer when a call's key is missing (with {@code limiter.empty-key=reject}) or too long: a 400 that says
	 * which, without the limit, the expression or the method, which are logged instead.
	 * @param exception the failure
	 * @return a 400 response
	 */
	@ExceptionHandler(RateLimitKeyException.class)
	public ResponseEntity<ProblemDetail> badKey(RateLimitKeyException exception) {
		return ResponseEntity.badRequest()
			.contentType(MediaType.APPLICATION_PROBLEM_JSON)
			.body(RateLimitAnswer.badKey(exception).problem());
	}

}
