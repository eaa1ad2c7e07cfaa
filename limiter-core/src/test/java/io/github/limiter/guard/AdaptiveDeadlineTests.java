package io.github.limiter.guard;

import java.time.Duration;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Given answers of known latencies at known times, the deadline is three times the slowest answer of the last ten
 * seconds, between the floor and the ceiling.
 */
class AdaptiveDeadlineTests {

	private static final long MS = 1_000_000;

	private static final long S = 1_000 * MS;

	private final AdaptiveDeadline deadline = new AdaptiveDeadline(Duration.ofMillis(50), Duration.ofSeconds(1));

	@Test
	void withoutSlowAnswersTheDeadlineIsTheFloor() {
		assertThat(this.deadline.nanos(0)).isEqualTo(50 * MS);
		this.deadline.record(2 * MS, 0);
		assertThat(this.deadline.nanos(0)).isEqualTo(50 * MS);
	}

	@Test
	void slowAnswersRaiseItUpToTheCeilingAndItFallsBackTenSecondsLater() {
		long start = 100 * S;
		this.deadline.record(40 * MS, start);
		this.deadline.record(120 * MS, start + 300 * MS);
		this.deadline.record(10 * MS, start + 2 * S);
		assertThat(this.deadline.nanos(start + 3 * S)).isEqualTo(360 * MS);
		this.deadline.record(700 * MS, start + 4 * S);
		assertThat(this.deadline.nanos(start + 4 * S)).as("never above the ceiling").isEqualTo(S);
		assertThat(this.deadline.nanos(start + 13 * S)).as("the 700 ms answer is 9 s old").isEqualTo(S);
		assertThat(this.deadline.nanos(start + 14 * S)).as("only the 10 ms answer is left").isEqualTo(50 * MS);
		assertThat(this.deadline.nanos(start + 20 * S)).isEqualTo(50 * MS);
	}

	@Test
	void aSlotOfAnOldSecondIsReused() {
		this.deadline.record(300 * MS, 0);
		this.deadline.record(20 * MS, 10 * S);
		assertThat(this.deadline.nanos(10 * S)).isEqualTo(60 * MS);
	}

}
