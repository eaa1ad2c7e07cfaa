package io.github.limiter.algorithm;

import io.github.limiter.Decision;

import java.time.DayOfWeek;
import java.time.Duration;
import java.time.ZoneId;
import java.util.List;
import java.util.Objects;

/**
 * Fixed window counter: at most {@code limit} permits per window.
 *
 * <p>Windows are aligned to the epoch ({@code [k·window, (k+1)·window)}), or to calendar periods in a time zone
 * ({@link CalendarUnit}: "once per calendar day, from local midnight"). The counter starts from zero in each window,
 * so up to twice the limit can pass within one window length around a boundary; use {@link SlidingWindowLog} or
 * {@link SlidingWindowCounter} when that matters.
 *
 * <p>State: the window start and the count, about 100 bytes in Redis. Script: {@code fixed_window.lua}.
 */
public final class FixedWindow extends AbstractLimit<FixedWindow.State> {

	private volatile List<String> parameters;

	/** A builder's limit before {@link Builder#limit} is called. */
	private static final long UNSET = Long.MIN_VALUE;

	private final long limit;

	private final long windowMicros;

	private final CalendarUnit calendarUnit;

	private final ZoneId zone;

	private final DayOfWeek firstDayOfWeek;

	private FixedWindow(Builder builder) {
		super(builder.name, builder.scope);
		if (builder.limit == UNSET) {
			throw invalid("limit must be set");
		}
		this.limit = positive("limit", builder.limit);
		this.calendarUnit = builder.calendarUnit;
		if (this.calendarUnit == null) {
			this.windowMicros = micros("window", builder.window);
			this.zone = null;
			this.firstDayOfWeek = null;
		}
		else {
			if (builder.window != null) {
				throw invalid(
						"window and calendar unit are exclusive but both were set: window=" + builder.window + ", calendar unit=" + this.calendarUnit);
			}
			this.windowMicros = 0;
			if (builder.zone == null || builder.firstDayOfWeek == null) {
				throw invalid(((builder.zone == null) ? "zone" : "first day of week") + " of a calendar window must be set");
			}
			this.zone = builder.zone;
			this.firstDayOfWeek = builder.firstDayOfWeek;
		}
	}

	/**
	 * A limit of {@code limit} permits per epoch-aligned window.
	 * @param name the limit's name
	 * @param limit permits per window
	 * @param window the window length
	 * @return the limit
	 */
	public static FixedWindow of(String name, long limit, Duration window) {
		return builder(name).limit(limit).window(window).build();
	}

	/**
	 * A limit of {@code limit} permits per calendar period in a time zone.
	 * @param name the limit's name
	 * @param limit permits per period
	 * @param unit the calendar period
	 * @param zone the time zone whose midnight starts a period
	 * @return the limit
	 */
	public static FixedWindow ofCalendar(String name, long limit, CalendarUnit unit, ZoneId zone) {
		return builder(name).limit(limit).calendar(unit, zone).build();
	}

	/**
	 * Starts a builder.
	 * @param name the limit's name
	 * @return a builder
	 */
	public static Builder builder(String name) {
		return new Builder(name);
	}

	@Override
	public FixedWindow dividedBy(int instances) {
		Builder builder = builder(name()).limit(share(this.limit, instances)).scope(scope());
		return (this.calendarUnit != null)
				? builder.calendar(this.calendarUnit, this.zone).firstDayOfWeek(this.firstDayOfWeek).build()
				: builder.window(Duration.ofNanos(this.windowMicros * 1000)).build();
	}

	@Override
	public Algorithm algorithm() {
		return Algorithm.FIXED_WINDOW;
	}

	@Override
	public long capacity() {
		return this.limit;
	}

	@Override
	public Duration window() {
		return (this.calendarUnit != null) ? this.calendarUnit.nominal() : Duration.ofNanos(this.windowMicros * 1000);
	}

	@Override
	public Duration retention() {
		return (this.calendarUnit != null) ? this.calendarUnit.longest() : Duration.ofNanos(this.windowMicros * 1000);
	}

	/**
	 * The calendar unit windows align to, or {@code null} for epoch-aligned windows.
	 * @return the calendar unit or {@code null}
	 */
	public CalendarUnit calendarUnit() {
		return this.calendarUnit;
	}

	long windowStart(long now) {
		if (this.calendarUnit == null) {
			return Math.floorDiv(now, this.windowMicros) * this.windowMicros;
		}
		return this.calendarUnit.startMicros(now, this.zone, this.firstDayOfWeek);
	}

	long windowEnd(long start) {
		if (this.calendarUnit == null) {
			return start + this.windowMicros;
		}
		return this.calendarUnit.nextStartMicros(start, this.zone, this.firstDayOfWeek);
	}

	@Override
	public Outcome<State> evaluate(State state, long now, long cost) {
		now = notBefore(state, now);
		long start = windowStart(now);
		long end = windowEnd(start);
		long count = (state != null && state.start == start) ? state.count : 0;
		boolean allowed = count + cost <= this.limit;
		long after = allowed ? count + cost : count;
		return new Outcome<>(allowed, this.limit - after, allowed ? 0 : end - now, (after == 0) ? 0 : end - now, 0,
				allowed ? new State(start, after, end) : state);
	}

	@Override
	public State record(State state, long now, long cost) {
		now = notBefore(state, now);
		long start = windowStart(now);
		long count = (state != null && state.start == start) ? state.count : 0;
		return new State(start, Math.min(this.limit, count + cost), windowEnd(start));
	}

	/**
	 * A clock that went back behind the stored window decides as at that window's start: an older window started
	 * afresh over the newer one's count would admit its permits twice.
	 */
	private static long notBefore(State state, long now) {
		return (state != null && now < state.start) ? state.start : now;
	}

	@Override
	public State refund(State state, long now, long cost, Decision charged) {
		if (state == null || state.start != windowStart(charged.timeMicros())) {
			// The window charged has ended: the permits left with it.
			return state;
		}
		return new State(state.start, Math.max(0, state.count - cost), state.end);
	}

	@Override
	public long expiresAtMicros(State state) {
		return state.end;
	}

	@Override
	public List<String> scriptParameters(long clientNowMicros) {
		if (this.calendarUnit == null) {
			if (this.parameters == null) {
				// Built once: the hot path of every Redis decision reads it.
				this.parameters = List.of(algorithm().code(), Long.toString(this.limit), Long.toString(this.windowMicros));
			}
			return this.parameters;
		}
		// The client describes the calendar around its own clock: the previous, current and next period. The script
		// picks the one that contains the Redis time, so a client clock that is off by less than a period is harmless.
		long current = windowStart(clientNowMicros);
		long previous = windowStart(current - 1);
		long next = windowEnd(current);
		long afterNext = windowEnd(next);
		return List.of("fc", Long.toString(this.limit), Long.toString(previous), Long.toString(current),
				Long.toString(next), Long.toString(afterNext));
	}

	@Override
	List<Object> definition() {
		return java.util.Arrays.asList(this.limit, this.windowMicros, this.calendarUnit, this.zone, this.firstDayOfWeek);
	}

	@Override
	public String toString() {
		return "FixedWindow[" + name() + ": " + this.limit + " per "
				+ ((this.calendarUnit != null) ? this.calendarUnit + " in " + this.zone : retention()) + scopeText() + "]";
	}

	/**
	 * Count of one window.
	 *
	 * @param start window start, microseconds since the epoch
	 * @param count permits consumed in the window
	 * @param end window end, microseconds since the epoch
	 */
	public record State(long start, long count, long end) {

	}

	/**
	 * Builder of {@link FixedWindow}.
	 */
	public static final class Builder {

		private final String name;

		private long limit = UNSET;

		private Duration window;

		private CalendarUnit calendarUnit;

		private ZoneId zone;

		private DayOfWeek firstDayOfWeek = DayOfWeek.MONDAY;

		private Scope scope = Scope.SHARED;

		private Builder(String name) {
			this.name = name;
		}

		/**
		 * Permits per window.
		 * @param limit a positive number
		 * @return this builder
		 */
		public Builder limit(long limit) {
			this.limit = limit;
			return this;
		}

		/**
		 * Length of an epoch-aligned window.
		 * @param window a positive duration
		 * @return this builder
		 */
		public Builder window(Duration window) {
			this.window = window;
			return this;
		}

		/**
		 * Align windows to a calendar period in a time zone instead.
		 * @param unit the period
		 * @param zone the time zone
		 * @return this builder
		 */
		public Builder calendar(CalendarUnit unit, ZoneId zone) {
			this.calendarUnit = Objects.requireNonNull(unit, "calendar unit must not be null");
			this.zone = zone;
			return this;
		}

		/**
		 * First day of a {@link CalendarUnit#WEEK} (Monday by default).
		 * @param day the first day of the week
		 * @return this builder
		 */
		public Builder firstDayOfWeek(DayOfWeek day) {
			this.firstDayOfWeek = day;
			return this;
		}

		/**
		 * Who shares the limit.
		 * @param scope the scope
		 * @return this builder
		 */
		public Builder scope(Scope scope) {
			this.scope = scope;
			return this;
		}

		/**
		 * Validates and builds the limit.
		 * @return the limit
		 * @throws IllegalArgumentException naming the field and the value when a parameter is invalid
		 */
		public FixedWindow build() {
			return new FixedWindow(this);
		}

	}

}
