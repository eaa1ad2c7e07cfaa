package io.github.limiter.algorithm;

import java.time.Duration;
import java.time.ZoneId;

import org.junit.jupiter.api.Test;

import io.github.limiter.LimitRequest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * Invalid rules are rejected when they are built, with a message naming the field and the value.
 */
class LimitValidationTests {

	@Test
	void limitMustBePositive() {
		assertThatIllegalArgumentException().isThrownBy(() -> FixedWindow.of("a", 0, Duration.ofSeconds(1)))
			.withMessage("fixed window 'a': limit must be positive but was 0");
		assertThatIllegalArgumentException().isThrownBy(() -> SlidingWindowLog.of("a", -3, Duration.ofSeconds(1)))
			.withMessage("sliding window log 'a': limit must be positive but was -3");
		assertThatIllegalArgumentException().isThrownBy(() -> SlidingWindowCounter.of("a", 0, Duration.ofSeconds(1)))
			.withMessage("sliding window counter 'a': limit must be positive but was 0");
	}

	@Test
	void limitMustStayExactInRedisLua() {
		assertThatIllegalArgumentException().isThrownBy(() -> FixedWindow.of("a", Long.MAX_VALUE, Duration.ofSeconds(1)))
			.withMessage("fixed window 'a': limit must be at most 1000000000000000 but was 9223372036854775807");
		assertThatIllegalArgumentException().isThrownBy(() -> SlidingWindowCounter.of("a", 1L << 53, Duration.ofDays(1)))
			.withMessage("sliding window counter 'a': limit must be at most 1000000000000000 but was 9007199254740992");
		assertThatIllegalArgumentException().isThrownBy(() -> TokenBucket.of("a", 1L << 53, 1, Duration.ofDays(1)))
			.withMessage("token bucket 'a': capacity must be at most 1000000000000000 but was 9007199254740992");
	}

	@Test
	void aBucketIsRefusedWhenItsExactArithmeticWouldLeaveTheIntegersOfRedisLua() {
		// 31 per second takes ticks of 1/31 us: 9.5 billion permits (3,547 days to drain) make 9.5e15 ticks > 2^53.
		assertThatIllegalArgumentException()
			.isThrownBy(() -> TokenBucket.of("a", 9_500_000_000L, 31, Duration.ofSeconds(1)))
			.withMessageStartingWith("token bucket 'a': capacity 9500000000 at 31 per 1000000us cannot be held exactly");
		// The same capacity at a rate that divides the second evenly is exact and accepted.
		assertThat(TokenBucket.of("a", 9_500_000_000L, 32, Duration.ofSeconds(1)).capacity()).isEqualTo(9_500_000_000L);
	}

	@Test
	void aWarmupMustBePositiveAndHeldExactly() {
		assertThatIllegalArgumentException()
			.isThrownBy(() -> TokenBucket.builder("a").refill(10, Duration.ofSeconds(1)).warmup(Duration.ofSeconds(-1)).build())
			.withMessage("token bucket 'a': warm-up must be positive but was -1s");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> TokenBucket.of("a", 10, 31, Duration.ofSeconds(1)).withWarmup(Duration.ofDays(3600)))
			.withMessageStartingWith("token bucket 'a': warm-up of 311040000000000us with capacity 10 cannot be held exactly");
		assertThat(TokenBucket.of("a", 10, Duration.ofSeconds(1)).withWarmup(Duration.ZERO).warmup()).isZero();
	}

	@Test
	void durationsMustBeWholeMicroseconds() {
		// 1.5 us read as 1 us would enforce half as much again as the rate asked for.
		assertThatIllegalArgumentException().isThrownBy(() -> TokenBucket.of("a", 1, Duration.ofNanos(1500)))
			.withMessage("token bucket 'a': refill period must be whole microseconds but was 1500ns");
		assertThatIllegalArgumentException().isThrownBy(() -> FixedWindow.of("a", 1, Duration.ofMillis(1).plusNanos(1)))
			.withMessage("fixed window 'a': window must be whole microseconds but was 1000001ns");
		assertThat(TokenBucket.of("a", 1, Duration.ofNanos(2000)).refillPeriod()).isEqualTo(Duration.ofNanos(2000));
	}

	@Test
	void aBucketsCapacityAndBurstAreChecked() {
		assertThatIllegalArgumentException()
			.isThrownBy(() -> TokenBucket.builder("a").capacity(0).refill(5, Duration.ofSeconds(1)).build())
			.withMessage("token bucket 'a': capacity must be positive but was 0");
		assertThat(TokenBucket.builder("a").refill(5, Duration.ofSeconds(1)).build().capacity()).as("one refill")
			.isEqualTo(5);
		assertThatIllegalArgumentException()
			.isThrownBy(() -> LeakyBucket.nodelay("lb", 1, Duration.ofSeconds(1), Long.MAX_VALUE))
			.withMessage("leaky bucket 'lb': burst must be at most 999999999999999 but was 9223372036854775807");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> LeakyBucket.queueing("lb", 1, Duration.ofSeconds(1), 2).withMaxDelay(null))
			.withMessage("leaky bucket 'lb': max delay must be set (Duration.ZERO for none)");
	}

	@Test
	void aNameWithALoneSurrogateIsRefused() {
		// Its UTF-8 form would be '?': "quota\uD800" and "quota\uD801" would share their Redis keys.
		assertThatIllegalArgumentException().isThrownBy(() -> FixedWindow.of("quota\uD800", 1, Duration.ofSeconds(1)))
			.withMessage("name must be well-formed text but has a lone surrogate \\uD800 at index 5");
		assertThatIllegalArgumentException().isThrownBy(() -> FixedWindow.of("\uDC00quota", 1, Duration.ofSeconds(1)))
			.withMessage("name must be well-formed text but has a lone surrogate \\uDC00 at index 0");
		assertThat(FixedWindow.of("quota-\uD83D\uDE00", 1, Duration.ofSeconds(1)).name()).isEqualTo("quota-\uD83D\uDE00");
	}

	@Test
	void windowMustBePositiveAndBounded() {
		assertThatIllegalArgumentException().isThrownBy(() -> FixedWindow.of("a", 1, Duration.ZERO))
			.withMessage("fixed window 'a': window must be positive but was 0s");
		assertThatIllegalArgumentException().isThrownBy(() -> SlidingWindowLog.of("a", 1, Duration.ofSeconds(-1)))
			.withMessage("sliding window log 'a': window must be positive but was -1s");
		assertThatIllegalArgumentException().isThrownBy(() -> SlidingWindowCounter.of("a", 1, Duration.ofDays(100_000)))
			.withMessage("sliding window counter 'a': window must be at most 3660 days but was 100000d");
		assertThatIllegalArgumentException().isThrownBy(() -> FixedWindow.of("a", 1, Duration.ofNanos(10)))
			.withMessage("fixed window 'a': window must be at least one microsecond but was 10ns");
		assertThatIllegalArgumentException().isThrownBy(() -> FixedWindow.of("a", 1, null))
			.withMessage("fixed window 'a': window must be set");
		assertThatIllegalArgumentException().isThrownBy(() -> FixedWindow.builder("a").window(Duration.ofSeconds(1)).build())
			.withMessage("fixed window 'a': limit must be set");
	}

	@Test
	void bucketParametersMustBePositive() {
		assertThatIllegalArgumentException().isThrownBy(() -> TokenBucket.of("a", 0, 1, Duration.ofSeconds(1)))
			.withMessage("token bucket 'a': capacity must be positive but was 0");
		assertThatIllegalArgumentException().isThrownBy(() -> TokenBucket.of("a", 1, 0, Duration.ofSeconds(1)))
			.withMessage("token bucket 'a': refill tokens must be positive but was 0");
		assertThatIllegalArgumentException().isThrownBy(() -> TokenBucket.of("a", 1, 1, Duration.ZERO))
			.withMessage("token bucket 'a': refill period must be positive but was 0s");
		assertThatIllegalArgumentException().isThrownBy(() -> LeakyBucket.nodelay("a", 10, Duration.ofSeconds(1), -1))
			.withMessage("leaky bucket 'a': burst must not be negative but was -1");
		assertThatIllegalArgumentException().isThrownBy(() -> LeakyBucket.queueing("a", 0, Duration.ofSeconds(1), 1))
			.withMessage("leaky bucket 'a': rate must be positive but was 0");
	}

	@Test
	void ratesAndCapacitiesThatOverflowAreRejected() {
		assertThatIllegalArgumentException()
			.isThrownBy(() -> TokenBucket.of("a", 1, 2_000_000_000L, Duration.ofSeconds(1)))
			.withMessageContaining("above one permit per nanosecond");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> TokenBucket.of("a", 1_000_000_000_000L, 1, Duration.ofDays(1)))
			.withMessageContaining("takes longer than 3660 days to drain");
		assertThatIllegalArgumentException().isThrownBy(() -> SlidingWindowLog.of("a", 2_000_000, Duration.ofSeconds(1)))
			.withMessage("sliding window log 'a': limit must be at most 1000000 (one stored entry per permit) but was "
				+ "2000000; use a sliding window counter for large limits");
	}

	@Test
	void costAboveCapacityIsRejected() {
		TokenBucket bucket = TokenBucket.of("bucket", 5, Duration.ofSeconds(1));
		assertThatIllegalArgumentException().isThrownBy(() -> new LimitRequest(bucket, "k", 6))
			.withMessage("cost 6 exceeds the capacity 5 of limit 'bucket', so the call could never be admitted");
		assertThatIllegalArgumentException().isThrownBy(() -> new LimitRequest(bucket, "k", 0))
			.withMessage("cost must be at least 1 but was 0 for limit 'bucket'");
	}

	@Test
	void namesCannotHoldBracesOrWhitespace() {
		assertThatIllegalArgumentException().isThrownBy(() -> FixedWindow.of("a{b}", 1, Duration.ofSeconds(1)))
			.withMessage("name must not contain braces, whitespace or control characters but was 'a{b}'");
		assertThatIllegalArgumentException().isThrownBy(() -> FixedWindow.of(" ", 1, Duration.ofSeconds(1)))
			.withMessage("name must not be empty but was ' '");
		assertThatIllegalArgumentException().isThrownBy(() -> FixedWindow.of("n".repeat(257), 1, Duration.ofSeconds(1)))
			.withMessageStartingWith("name must be at most 256 characters long but was 257");
		assertThat(FixedWindow.of("n".repeat(256), 1, Duration.ofSeconds(1)).name()).hasSize(256);
	}

	@Test
	void calendarWindowsExcludeAFixedLength() {
		assertThatIllegalArgumentException()
			.isThrownBy(() -> FixedWindow.builder("a")
				.limit(1)
				.window(Duration.ofDays(1))
				.calendar(CalendarUnit.DAY, ZoneId.of("UTC"))
				.build())
			.withMessage("fixed window 'a': window and calendar unit are exclusive but both were set: window=PT24H, calendar unit=DAY");
	}

}
