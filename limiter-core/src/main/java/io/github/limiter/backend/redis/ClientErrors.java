package io.github.limiter.backend.redis;

import java.util.concurrent.CompletionException;
import java.util.function.Predicate;

import io.github.limiter.spi.BackendException;

/**
 * A Redis client's own errors inside a failure, which the backends wrap. Only those carry Redis's reply as Redis
 * wrote it; the backend's wrappers also name the keys, which are the callers' text and may hold any words.
 */
public final class ClientErrors {

	private ClientErrors() {
	}

	/**
	 * Whether any cause of the failure that is not one of the limiter's wrappers (a {@link BackendException}, a
	 * {@link CompletionException}) passes the test.
	 * @param failure the failure
	 * @param test the test of a client's exception
	 * @return {@code true} when one passes
	 */
	public static boolean any(Throwable failure, Predicate<Throwable> test) {
		for (Throwable cause = failure; cause != null; cause = (cause.getCause() != cause) ? cause.getCause() : null) {
			if (!(cause instanceof BackendException) && !(cause instanceof CompletionException) && test.test(cause)) {
				return true;
			}
		}
		return false;
	}

	/**
	 * Whether Redis's reply, the exception's message, starts with one of the given words.
	 * @param cause a client's exception
	 * @param words error codes ({@code TRYAGAIN}, {@code CLUSTERDOWN})
	 * @return {@code true} when it does
	 */
	public static boolean replyStartsWith(Throwable cause, String... words) {
		String message = cause.getMessage();
		if (message == null) {
			return false;
		}
		for (String word : words) {
			if (message.startsWith(word)) {
				return true;
			}
		}
		return false;
	}

}
