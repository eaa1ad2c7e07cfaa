package io.github.limiter.spi;

/**
 * Thrown (or used to complete a stage) when a backend cannot reach its storage or the storage refuses a command.
 */
public class BackendException extends RuntimeException {

	private static final long serialVersionUID = 1L;

	/**
	 * Creates an exception.
	 * @param message what failed
	 * @param cause the underlying failure
	 */
	public BackendException(String message, Throwable cause) {
		super(message, cause);
	}

}
