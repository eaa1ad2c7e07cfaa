package io.github.limiter.spring.interceptor;

/**
 * Thrown when a key expression evaluates to {@code null} or an empty string and {@code limiter.empty-key} is
 * {@code reject}.
 */
public class RateLimitKeyException extends RuntimeException {

	private static final long serialVersionUID = 1L;

	/**
	 * Creates an exception.
	 * @param message what evaluated to nothing
	 */
	public RateLimitKeyException(String message) {
		super(message);
	}

}
