package io.github.limiter.spi;

import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;

/**
 * A warning about failures that may come in bursts (a refund that Redis did not take during a failover, a listener
 * that throws on every decision): logged with its reason at most every 10 seconds, with how many were not logged
 * since; a failure's stack trace only the first time it is of its kind (its class), so that a call that fails at a hundred requests a second writes
 * one trace, not a hundred a second. For backends, the guard around them, and the starter.
 */
public final class OccasionalWarning {

	private static final long EVERY_NANOS = TimeUnit.SECONDS.toNanos(10);

	private final System.Logger logger;

	private final System.Logger.Level level;

	private final AtomicLong last = new AtomicLong(System.nanoTime() - EVERY_NANOS);

	private final AtomicLong skipped = new AtomicLong();

	/** The class of the last failure logged with its stack trace: another kind of failure gets one too. */
	private final AtomicReference<Class<?>> traced = new AtomicReference<>();

	/**
	 * A warning logged at WARNING under the name of the class that raises it.
	 * @param source the class
	 */
	public OccasionalWarning(Class<?> source) {
		this(source, System.Logger.Level.WARNING);
	}

	/**
	 * A message logged at a level under the name of the class that raises it.
	 * @param source the class
	 * @param level the level
	 */
	public OccasionalWarning(Class<?> source, System.Logger.Level level) {
		this.logger = System.getLogger(source.getName());
		this.level = level;
	}

	/**
	 * Logs the message, unless one was logged less than 10 seconds ago.
	 * @param message the message, built only when it is logged
	 */
	public void warn(Supplier<String> message) {
		warn(message, null);
	}

	/**
	 * Logs the message with the failure's {@linkplain #reason(Throwable) reason}, unless one was logged less than 10
	 * seconds ago; with its stack trace when the last one traced was of another class.
	 * @param message the message, built only when it is logged
	 * @param failure the failure, or {@code null}
	 */
	public void warn(Supplier<String> message, Throwable failure) {
		long now = System.nanoTime();
		long last = this.last.get();
		if (now - last < EVERY_NANOS || !this.last.compareAndSet(last, now)) {
			this.skipped.incrementAndGet();
			return;
		}
		long skipped = this.skipped.getAndSet(0);
		String text = message.get() + ((failure != null) ? ": " + reason(failure) : "")
				+ ((skipped > 0) ? " (" + skipped + " more like it in the last 10 s)" : "");
		Class<?> kind = (failure != null) ? failure.getClass() : null;
		Class<?> tracedLast = this.traced.get();
		if (kind != null && kind != tracedLast && this.traced.compareAndSet(tracedLast, kind)) {
			this.logger.log(this.level, text, failure);
		}
		else {
			this.logger.log(this.level, text);
		}
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
		if (root == top || message == null) {
			return top.getClass().getSimpleName() + ": " + message;
		}
		// The root's own words are often the one that says what is wrong ("WRONGPASS ...", "NOPERM ...", an address
		// refused), where the wrappers above it say only that something failed.
		String rootMessage = root.getMessage();
		return message + " (" + root.getClass().getSimpleName()
				+ ((rootMessage != null && !message.contains(rootMessage)) ? ": " + rootMessage : "") + ")";
	}

}
