package io.github.limiter.algorithm;

import java.time.DayOfWeek;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneId;
import java.time.temporal.TemporalAdjusters;

/**
 * Calendar periods a {@link FixedWindow} can align to, in a time zone: a day starts at local midnight, a week at
 * local midnight of its first day, a month at local midnight of its first day. Daylight saving time is respected (a
 * day may last 23 or 25 hours).
 */
public enum CalendarUnit {

	/** From local midnight to the next local midnight. */
	DAY(Duration.ofDays(1), Duration.ofHours(25)),

	/** From local midnight of the first day of the week, for seven days. */
	WEEK(Duration.ofDays(7), Duration.ofDays(7).plusHours(1)),

	/** From local midnight of the first day of the month to that of the next month. */
	MONTH(Duration.ofDays(30), Duration.ofDays(31).plusHours(1));

	private final Duration nominal;

	private final Duration longest;

	CalendarUnit(Duration nominal, Duration longest) {
		this.nominal = nominal;
		this.longest = longest;
	}

	/**
	 * Usual length of one period (a day, a week, 30 days), for display.
	 * @return the nominal length
	 */
	public Duration nominal() {
		return this.nominal;
	}

	/**
	 * Upper bound of the length of one period, DST shifts included.
	 * @return the longest period
	 */
	public Duration longest() {
		return this.longest;
	}

	LocalDate startDate(LocalDate date, DayOfWeek firstDayOfWeek) {
		return switch (this) {
			case DAY -> date;
			case WEEK -> date.with(TemporalAdjusters.previousOrSame(firstDayOfWeek));
			case MONTH -> date.withDayOfMonth(1);
		};
	}

	LocalDate next(LocalDate start) {
		return switch (this) {
			case DAY -> start.plusDays(1);
			case WEEK -> start.plusWeeks(1);
			case MONTH -> start.plusMonths(1);
		};
	}

	/**
	 * Start of the period that contains the instant.
	 * @param micros the instant, microseconds since the epoch
	 * @param zone the time zone
	 * @param firstDayOfWeek first day of a week
	 * @return microseconds since the epoch
	 */
	long startMicros(long micros, ZoneId zone, DayOfWeek firstDayOfWeek) {
		Instant instant = Instant.ofEpochSecond(Math.floorDiv(micros, 1_000_000L), Math.floorMod(micros, 1_000_000L) * 1000);
		LocalDate date = LocalDate.ofInstant(instant, zone);
		return toMicros(startDate(date, firstDayOfWeek), zone);
	}

	/**
	 * Start of the period after the one starting at the given instant.
	 * @param startMicros start of a period
	 * @param zone the time zone
	 * @param firstDayOfWeek first day of a week
	 * @return microseconds since the epoch
	 */
	long nextStartMicros(long startMicros, ZoneId zone, DayOfWeek firstDayOfWeek) {
		LocalDate start = LocalDate.ofInstant(Instant.ofEpochSecond(Math.floorDiv(startMicros, 1_000_000L)), zone);
		return toMicros(next(startDate(start, firstDayOfWeek)), zone);
	}

	private static long toMicros(LocalDate date, ZoneId zone) {
		return date.atStartOfDay(zone).toEpochSecond() * 1_000_000L;
	}

}
