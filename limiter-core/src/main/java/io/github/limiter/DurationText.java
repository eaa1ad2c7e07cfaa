package io.github.limiter;

import java.time.Duration;

/**
 * A duration written as an annotation attribute or a Spring Boot property would write it ({@code 1500ms},
 * {@code 3661d}, {@code -1s}), for messages that name a value its user wrote that way rather than as ISO-8601
 * ({@code PT87864H}).
 */
public final class DurationText {

	private static final long[] SECONDS = { 86_400, 3_600, 60, 1 };

	private static final String[] SECOND_UNITS = { "d", "h", "m", "s" };

	private static final long[] NANOS = { 1_000_000, 1_000, 1 };

	private static final String[] NANO_UNITS = { "ms", "us", "ns" };

	private DurationText() {
	}

	/**
	 * The duration in the largest unit of which it is a whole number: days, hours, minutes, seconds, milliseconds,
	 * microseconds or nanoseconds.
	 * @param duration the duration, or {@code null}
	 * @return its text ({@code "null"} for {@code null})
	 */
	public static String of(Duration duration) {
		if (duration == null) {
			return "null";
		}
		if (duration.isZero()) {
			return "0s";
		}
		Duration size;
		try {
			size = duration.abs();
		}
		catch (ArithmeticException tooLong) {
			return duration.toString();
		}
		String sign = duration.isNegative() ? "-" : "";
		if (size.getNano() == 0) {
			for (int i = 0; i < SECONDS.length; i++) {
				if (size.getSeconds() % SECONDS[i] == 0) {
					return sign + size.getSeconds() / SECONDS[i] + SECOND_UNITS[i];
				}
			}
		}
		for (int i = 0; i < NANOS.length; i++) {
			if (size.getNano() % NANOS[i] == 0) {
				try {
					long count = Math.addExact(Math.multiplyExact(size.getSeconds(), 1_000_000_000 / NANOS[i]),
							size.getNano() / NANOS[i]);
					return sign + count + NANO_UNITS[i];
				}
				catch (ArithmeticException tooLong) {
					return duration.toString();
				}
			}
		}
		return duration.toString();
	}

}
