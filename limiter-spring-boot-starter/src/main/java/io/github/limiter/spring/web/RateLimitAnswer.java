package io.github.limiter.spring.web;

import java.util.LinkedHashMap;
import java.util.Map;

import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.ProblemDetail;

import io.github.limiter.Decision;
import io.github.limiter.RateLimitExceededException;
import io.github.limiter.spring.interceptor.RateLimitKeyException;

/**
 * The answer to a call the limiter refused, the same whichever part of a web application writes it: a handler's
 * exception handling ({@link RateLimitExceptionHandler}), or, for a refusal thrown outside any handler (a filter, a
 * functional endpoint), {@link RateLimitRejectionFilter} and {@link RateLimitWebExceptionHandler}. A 429 for a limit
 * that refused, a 400 for a key that cannot be used; an RFC 9457 problem in either case.
 */
final class RateLimitAnswer {

	private static final System.Logger logger = System.getLogger(RateLimitAnswer.class.getName());

	/** How far down a chain of causes a refusal is looked for (a servlet container wraps it once or twice). */
	private static final int MAX_CAUSES = 8;

	private final HttpStatus status;

	private final String title;

	private final String detail;

	private final Map<String, Object> properties;

	private final Map<String, String> headers;

	private RateLimitAnswer(HttpStatus status, String title, String detail, Map<String, Object> properties,
			Map<String, String> headers) {
		this.status = status;
		this.title = title;
		this.detail = detail;
		this.properties = properties;
		this.headers = headers;
	}

	/**
	 * The 429 for a limit that refused: {@code Retry-After}, and the rejecting limit's {@code RateLimit-Policy} and
	 * {@code RateLimit}.
	 * @param exception the refusal
	 * @return the answer
	 */
	static RateLimitAnswer tooManyRequests(RateLimitExceededException exception) {
		Decision decision = exception.getDecision();
		long retryAfter = RateLimitHeaders.retryAfterSeconds(decision);
		Map<String, Object> properties = new LinkedHashMap<>();
		properties.put("limit", decision.limitName());
		properties.put("retryAfterSeconds", retryAfter);
		Map<String, String> headers = new LinkedHashMap<>();
		headers.put(HttpHeaders.RETRY_AFTER, Long.toString(retryAfter));
		headers.put(RateLimitHeaders.POLICY, RateLimitHeaders.policy(decision, exception.getRequests()));
		headers.put(RateLimitHeaders.RATE_LIMIT, RateLimitHeaders.rateLimit(decision, exception.getRequests()));
		return new RateLimitAnswer(HttpStatus.TOO_MANY_REQUESTS, "Too Many Requests", "Rate limit '"
				+ decision.limitName() + "' " + exception.getReason() + "; retry in " + retryAfter + " s.",
				properties, headers);
	}

	/**
	 * The 400 for a key that is missing or too long. It names no limit, expression or method: those go to the log
	 * (DEBUG here; the interceptor has already warned).
	 * @param exception the failure
	 * @return the answer
	 */
	static RateLimitAnswer badKey(RateLimitKeyException exception) {
		logger.log(System.Logger.Level.DEBUG, () -> "Answered 400: " + exception.getMessage() + " ("
				+ exception.getInternalDetail() + ")");
		return new RateLimitAnswer(HttpStatus.BAD_REQUEST, exception.getReason().title(), exception.getMessage(),
				Map.of(), Map.of());
	}

	/**
	 * The answer to a failure, if the failure is the limiter's refusal or has it among its causes (a servlet
	 * container or a library may have wrapped it).
	 * @param failure what was thrown
	 * @return the answer, or {@code null} when the failure is not the limiter's
	 */
	static RateLimitAnswer of(Throwable failure) {
		Throwable cause = failure;
		for (int i = 0; i < MAX_CAUSES && cause != null; i++) {
			if (cause instanceof RateLimitExceededException exceeded) {
				return tooManyRequests(exceeded);
			}
			if (cause instanceof RateLimitKeyException key) {
				return badKey(key);
			}
			cause = (cause.getCause() != cause) ? cause.getCause() : null;
		}
		return null;
	}

	HttpStatus status() {
		return this.status;
	}

	/**
	 * The response's fields: {@code Retry-After}, {@code RateLimit-Policy} and {@code RateLimit} for a 429, none for
	 * a 400.
	 * @return the fields
	 */
	Map<String, String> headers() {
		return this.headers;
	}

	/**
	 * The body as a {@link ProblemDetail}, for a writer that has Spring's message converters.
	 * @return the problem
	 */
	ProblemDetail problem() {
		ProblemDetail problem = ProblemDetail.forStatusAndDetail(this.status, this.detail);
		problem.setTitle(this.title);
		this.properties.forEach(problem::setProperty);
		return problem;
	}

	/**
	 * The body as JSON text, for a writer outside Spring's message conversion (a filter, a {@code WebExceptionHandler}):
	 * the members that Spring's own JSON for {@link #problem()} has, in its order.
	 * @param instance the request's path
	 * @return {@code application/problem+json} text, in ASCII (other characters escaped)
	 */
	String json(String instance) {
		StringBuilder json = new StringBuilder(256).append("{\"type\":\"about:blank\",\"title\":");
		quote(json, this.title).append(",\"status\":").append(this.status.value()).append(",\"detail\":");
		quote(json, this.detail);
		if (instance != null) {
			quote(json.append(",\"instance\":"), instance);
		}
		this.properties.forEach((name, value) -> {
			quote(json.append(','), name).append(':');
			if (value instanceof Number) {
				json.append(value);
			}
			else {
				quote(json, String.valueOf(value));
			}
		});
		return json.append('}').toString();
	}

	private static StringBuilder quote(StringBuilder json, String text) {
		json.append('"');
		for (int i = 0; i < text.length(); i++) {
			char c = text.charAt(i);
			switch (c) {
				case '"' -> json.append("\\\"");
				case '\\' -> json.append("\\\\");
				case '\n' -> json.append("\\n");
				case '\r' -> json.append("\\r");
				case '\t' -> json.append("\\t");
				default -> {
					// Only ASCII goes out as itself, so that the body reads the same in whatever charset the
					// response's writer was opened with.
					if (c < 0x20 || c > 0x7e) {
						json.append(String.format("\\u%04x", (int) c));
					}
					else {
						json.append(c);
					}
				}
			}
		}
		return json.append('"');
	}

}
