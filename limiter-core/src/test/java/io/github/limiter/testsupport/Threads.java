package io.github.limiter.testsupport;

import java.time.Duration;
import java.util.function.BooleanSupplier;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Waiting for what a background thread does, bounded generously: on a loaded machine the tests assert what happens,
 * not how soon.
 */
public final class Threads {

	/** The longest a condition is waited for. */
	public static final Duration PATIENCE = Duration.ofSeconds(20);

	private Threads() {
	}

	/**
	 * Waits until the condition holds, failing after {@link #PATIENCE}.
	 * @param condition the condition
	 */
	public static void eventually(BooleanSupplier condition) {
		long deadline = System.nanoTime() + PATIENCE.toNanos();
		while (!condition.getAsBoolean()) {
			assertThat(System.nanoTime()).as("condition within " + PATIENCE).isLessThan(deadline);
			try {
				Thread.sleep(1);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				throw new IllegalStateException(ex);
			}
		}
	}

	/**
	 * The live thread of this name.
	 * @param name the thread's name
	 * @return the thread, or {@code null} when none of that name is alive
	 */
	public static Thread named(String name) {
		return Thread.getAllStackTraces()
			.keySet()
			.stream()
			.filter((thread) -> thread.getName().equals(name) && thread.isAlive())
			.findFirst()
			.orElse(null);
	}

}
