package io.github.limiter.spi;

import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

/**
 * A warning about failures that may come in bursts (a refund that Redis did not take during a failover): logged with
 * its reason, without a stack trace, at most every 10 seconds, with how many were not logged since. For backends and
 * the guard around them.
 */
public final class OccasionalWarning {

	private static final long EVERY_NANOS = TimeUnit.SECONDS.toNanos(10);

	private final System.Logger logger;

	private final AtomicLong last = new AtomicLong(System.nanoTime() - EVERY_NANOS);

	private final AtomicLong skipped = new AtomicLong();

	/**
	 * A warning logged under the name of the class that raises it.
	 * @param source the class
	 */
	public OccasionalWarning(Class<?> source) {
		this.logger = System.getLogger(source.getName());
	}

	/**
	 * Logs the message at WARNING, unless one was logged less than 10 seconds ago.
	 * @param message the message, built only when it is logged
	 */
	public void warn(Supplier<String> message) {
		long now = System.nanoTime();
		long last = this.last.get();
		if (now - last < EVERY_NANOS || !this.last.compareAndSet(last, now)) {
			this.skipped.incrementAndGet();
			return;
		}
		long skipped = this.skipped.getAndSet(0);
		this.logger.log(System.Logger.Level.WARNING,
				message.get() + ((skipped > 0) ? " (" + skipped + " more like it in the last 10 s)" : ""));
	}

	/**
	 * The reason of a failure in one line: its message, and its root cause's type when it is another.
	 * @param failure a failure, possibly wrapped in a {@link CompletionException}
	 * @return the reason
	 */
	public static String reason(Throwable failure) {
		Throwable top = (failure instanceof CompletionException && failure.getCause() != null) ? failure.getCause()
				: failure;
		Throwable root = top;
		while (root.getCause() != null && root.getCause() != root) {
			root = root.getCause();
		}
		String message = top.getMessage();
		return (root == top || message == null) ? top.getClass().getSimpleName() + ": " + message
				: message + " (" + root.getClass().getSimpleName() + ")";
	}

}
