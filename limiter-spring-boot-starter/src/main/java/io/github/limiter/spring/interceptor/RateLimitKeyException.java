package io.github.limiter.spring.interceptor;

/**
 * Thrown when a call's key cannot be used: its expression gave {@code null} or an empty string while
 * {@code limiter.empty-key} is {@code reject}, or it is longer than
 * {@value io.github.limiter.LimitRequest#MAX_KEY_LENGTH} characters. Both come from the caller's input, so a web
 * request gets a 400; the message names no limit, expression or method, which {@link #getInternalDetail()} holds
 * for the log.
 */
public class RateLimitKeyException extends RuntimeException {

	private static final long serialVersionUID = 1L;

	/** What is wrong with the key. */
	public enum Reason {

		/** The key expression gave {@code null} or an empty string. */
		MISSING("Rate limit key missing"),

		/** The key is longer than {@value io.github.limiter.LimitRequest#MAX_KEY_LENGTH} characters. */
		TOO_LONG("Rate limit key too long");

		private final String title;

		Reason(String title) {
			this.title = title;
		}

		/**
		 * A short summary for a client, such as a problem's title.
		 * @return the title
		 */
		public String title() {
			return this.title;
		}

	}

	private final Reason reason;

	private final String internalDetail;

	/**
	 * Creates an exception.
	 * @param reason what is wrong
	 * @param message what a client may read
	 * @param internalDetail the limit, expression and method, for the log only
	 */
	public RateLimitKeyException(Reason reason, String message, String internalDetail) {
		super(message);
		this.reason = reason;
		this.internalDetail = internalDetail;
	}

	/**
	 * What is wrong with the key.
	 * @return the reason
	 */
	public Reason getReason() {
		return this.reason;
	}

	/**
	 * The limit, the key expression and the method, which a client must not see.
	 * @return the detail for the log
	 */
	public String getInternalDetail() {
		return this.internalDetail;
	}

	@Override
	public String toString() {
		return super.toString() + " (" + this.internalDetail + ")";
	}

}
