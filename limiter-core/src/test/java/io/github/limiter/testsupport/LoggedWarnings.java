package io.github.limiter.testsupport;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

/**
 * The warnings a class logs while a test runs. The library logs through {@link System.Logger}, which is
 * {@code java.util.logging} in these tests: its records are read there (a capture of the process's output misses
 * lines written to a stream bound before it).
 */
public final class LoggedWarnings implements AutoCloseable {

	private final Logger logger;

	private final List<String> messages = new CopyOnWriteArrayList<>();

	private final Handler handler = new Handler() {

		@Override
		public void publish(LogRecord record) {
			if (record.getLevel() == Level.WARNING) {
				LoggedWarnings.this.messages.add(record.getMessage());
			}
		}

		@Override
		public void flush() {
		}

		@Override
		public void close() {
		}

	};

	private LoggedWarnings(Class<?> source) {
		this.logger = Logger.getLogger(source.getName());
		this.logger.addHandler(this.handler);
	}

	/**
	 * Starts reading the warnings of a class.
	 * @param source the class that logs
	 * @return the warnings, until closed
	 */
	public static LoggedWarnings of(Class<?> source) {
		return new LoggedWarnings(source);
	}

	/**
	 * The warnings so far.
	 * @return their messages, in order
	 */
	public List<String> messages() {
		return this.messages;
	}

	@Override
	public void close() {
		this.logger.removeHandler(this.handler);
	}

}
