package io.github.limiter;

import java.time.Duration;
import java.time.temporal.ChronoUnit;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A duration in a message reads as its user wrote it in an annotation or a property.
 */
class DurationTextTests {

	@Test
	void eachDurationIsWrittenInTheLargestUnitThatHoldsItWhole() {
		assertThat(DurationText.of(Duration.ofDays(3661))).isEqualTo("3661d");
		assertThat(DurationText.of(Duration.ofHours(25))).isEqualTo("25h");
		assertThat(DurationText.of(Duration.ofSeconds(90))).isEqualTo("90s");
		assertThat(DurationText.of(Duration.ofMinutes(2))).isEqualTo("2m");
		assertThat(DurationText.of(Duration.ofMillis(1500))).isEqualTo("1500ms");
		assertThat(DurationText.of(Duration.ofMillis(1))).isEqualTo("1ms");
		assertThat(DurationText.of(Duration.of(500, ChronoUnit.MICROS))).isEqualTo("500us");
		assertThat(DurationText.of(Duration.ofNanos(1))).isEqualTo("1ns");
		assertThat(DurationText.of(Duration.ofSeconds(3, 7))).isEqualTo("3000000007ns");
	}

	@Test
	void signsZeroNullAndOverlongDurationsAreWrittenToo() {
		assertThat(DurationText.of(Duration.ofMillis(-1))).isEqualTo("-1ms");
		assertThat(DurationText.of(Duration.ofSeconds(-1))).isEqualTo("-1s");
		assertThat(DurationText.of(Duration.ZERO)).isEqualTo("0s");
		assertThat(DurationText.of(null)).isEqualTo("null");
		Duration overlong = Duration.ofSeconds(Long.MAX_VALUE / 10, 1);
		assertThat(DurationText.of(overlong)).isEqualTo(overlong.toString());
		Duration mostNegative = Duration.ofSeconds(Long.MIN_VALUE);
		assertThat(DurationText.of(mostNegative)).isEqualTo(mostNegative.toString());
	}

}
