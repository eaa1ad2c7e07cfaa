package io.github.limiter.testsupport;

import java.time.Duration;
import java.time.ZoneId;
import java.time.ZonedDateTime;

/**
 * For tests that count the admissions of a fixed window on the real clock: the JVM's, or the {@code TIME} of a Redis
 * on this machine, which is the same clock. A window boundary between the counted calls starts a fresh count, and a
 * call the test expects to be rejected is admitted (or a key a test expects to find has expired with its window).
 * Called before those calls, these wait, when the current window ends too soon, until the next one has begun.
 */
public final class WindowBoundaries {

	/** Past the boundary by this much, so that the clock of whoever decides has passed it too. */
	private static final long PAST_MILLIS = 100;

	private WindowBoundaries() {
	}

	/**
	 * Returns once the current epoch-aligned window of the given length (a fixed window without a calendar) has more
	 * than {@code needed} left, waiting into the next window when it has not.
	 * @param window the window's length
	 * @param needed how long the calls that count on one window may take: at most the window less a second
	 * @throws InterruptedException if interrupted while waiting
	 */
	public static void awayFromTheEndOfTheWindow(Duration window, Duration needed) throws InterruptedException {
		long length = window.toMillis();
		check(length, needed);
		long left = length - Math.floorMod(System.currentTimeMillis(), length);
		if (left <= needed.toMillis()) {
			Thread.sleep(left + PAST_MILLIS);
		}
	}

	/**
	 * Returns once the next midnight in the given zone is more than {@code needed} away, waiting past it when it is
	 * not: every boundary of a calendar window (day, week or month) is a midnight in its zone.
	 * @param zone the calendar window's zone
	 * @param needed how long the calls that count on one window may take: at most an hour
	 * @throws InterruptedException if interrupted while waiting
	 */
	public static void awayFromMidnight(ZoneId zone, Duration needed) throws InterruptedException {
		check(Duration.ofHours(1).plusSeconds(1).toMillis(), needed);
		ZonedDateTime now = ZonedDateTime.now(zone);
		ZonedDateTime midnight = now.toLocalDate().plusDays(1).atStartOfDay(zone);
		long left = Duration.between(now, midnight).toMillis();
		if (left <= needed.toMillis()) {
			Thread.sleep(left + PAST_MILLIS);
		}
	}

	private static void check(long lengthMillis, Duration needed) {
		if (needed.isNegative() || needed.toMillis() > lengthMillis - 1000) {
			throw new IllegalArgumentException("a window of " + lengthMillis + " ms never has " + needed + " left");
		}
	}

}
