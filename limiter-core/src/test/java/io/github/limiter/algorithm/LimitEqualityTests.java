package io.github.limiter.algorithm;

import java.time.Duration;
import java.time.ZoneId;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

import org.junit.jupiter.api.Test;

import io.github.limiter.Limit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Limits are values: two built the same way, at different times, are equal and hash alike, so a caller that builds its
 * limit for every call finds in every map keyed by limits what the previous call left there; any difference in the
 * name, the scope or a parameter makes another limit.
 */
class LimitEqualityTests {

	private static final Duration SECOND = Duration.ofSeconds(1);

	private final List<Supplier<Limit>> builders = List.of(() -> FixedWindow.of("fw", 10, SECOND),
			() -> FixedWindow.ofCalendar("daily", 10, CalendarUnit.DAY, ZoneId.of("Europe/Paris")),
			() -> SlidingWindowLog.of("log", 10, SECOND), () -> SlidingWindowCounter.of("counter", 10, SECOND),
			() -> TokenBucket.of("bucket", 20, 10, SECOND), () -> LeakyBucket.queueing("queue", 10, SECOND, 5),
			() -> LeakyBucket.nodelay("nodelay", 10, SECOND, 5),
			() -> LeakyBucket.queueing("bounded", 10, SECOND, 5).withMaxDelay(Duration.ofMillis(300)));

	@Test
	void limitsBuiltAlikeAreEqualAndHashAlike() {
		Map<Limit, Integer> seen = new HashMap<>();
		for (Supplier<Limit> builder : this.builders) {
			Limit first = builder.get();
			Limit second = builder.get();
			assertThat(second).isNotSameAs(first).isEqualTo(first).hasSameHashCodeAs(first);
			seen.merge(first, 1, Integer::sum);
			seen.merge(second, 1, Integer::sum);
		}
		assertThat(seen).as("one entry per limit however often it is built").hasSize(this.builders.size())
			.allSatisfy((limit, count) -> assertThat(count).isEqualTo(2));
	}

	/** Limits that are not equal never print alike in a log: the scope shows when it is not the usual shared one. */
	@Test
	void aLimitPerInstanceSaysSoInItsDescription() {
		TokenBucket shared = TokenBucket.of("api", 10, SECOND);
		assertThat(shared).hasToString("TokenBucket[api: capacity 10, 10 per PT1S]");
		assertThat(shared.withScope(Limit.Scope.PER_INSTANCE)).hasToString("TokenBucket[api: capacity 10, 10 per PT1S, per instance]");
		assertThat(FixedWindow.builder("fw").limit(10).window(SECOND).scope(Limit.Scope.PER_INSTANCE).build().toString())
			.endsWith(", per instance]");
	}

	@Test
	void aSlidingLogsStateIsAValueOfItsPermits() {
		SlidingWindowLog.State state = new SlidingWindowLog.State(new long[] { 10, 20 }, new long[] { 1, 2 }, 3);
		assertThat(state).isEqualTo(new SlidingWindowLog.State(new long[] { 10, 20 }, new long[] { 1, 2 }, 3))
			.hasSameHashCodeAs(new SlidingWindowLog.State(new long[] { 10, 20 }, new long[] { 1, 2 }, 3))
			.isNotEqualTo(new SlidingWindowLog.State(new long[] { 10, 21 }, new long[] { 1, 2 }, 3))
			.hasToString("State[2 permits, times [10, 20], next serial 3]");
	}

	@Test
	void anyDifferenceMakesAnotherLimit() {
		assertThat(FixedWindow.of("fw", 10, SECOND)).isNotEqualTo(FixedWindow.of("fw", 11, SECOND))
			.isNotEqualTo(FixedWindow.of("fw2", 10, SECOND))
			.isNotEqualTo(FixedWindow.of("fw", 10, Duration.ofSeconds(2)))
			.isNotEqualTo(FixedWindow.builder("fw").limit(10).window(SECOND).scope(Limit.Scope.PER_INSTANCE).build())
			.isNotEqualTo(SlidingWindowCounter.of("fw", 10, SECOND));
		assertThat(FixedWindow.ofCalendar("daily", 10, CalendarUnit.DAY, ZoneId.of("Europe/Paris")))
			.isNotEqualTo(FixedWindow.ofCalendar("daily", 10, CalendarUnit.DAY, ZoneId.of("Asia/Tokyo")));
		assertThat(TokenBucket.of("bucket", 20, 10, SECOND)).isNotEqualTo(TokenBucket.of("bucket", 10, 20, SECOND));
		assertThat(TokenBucket.of("bucket", 20, 10, SECOND)).isNotEqualTo(TokenBucket.of("bucket", 20, 10, SECOND).withWarmup(SECOND))
			.isEqualTo(TokenBucket.of("bucket", 20, 10, SECOND).withWarmup(Duration.ZERO));
		LeakyBucket queue = LeakyBucket.queueing("queue", 10, SECOND, 5);
		assertThat(queue).isNotEqualTo(LeakyBucket.nodelay("queue", 10, SECOND, 5))
			.isNotEqualTo(queue.withMaxDelay(Duration.ofMillis(300)));
		assertThat(queue.withMaxDelay(Duration.ofMillis(300))).isNotEqualTo(queue.withMaxDelay(Duration.ofMillis(200)));
		assertThat(TokenBucket.of("bucket", 20, 10, SECOND).dividedBy(2))
			.isEqualTo(TokenBucket.of("bucket", 20, 10, SECOND).dividedBy(2))
			.isNotEqualTo(TokenBucket.of("bucket", 20, 10, SECOND));
	}

}
