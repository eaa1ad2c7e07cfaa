package io.github.limiter;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.Test;

import static io.github.limiter.testsupport.Threads.eventually;
import static io.github.limiter.testsupport.Threads.named;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The ticking clock: a recent reading that a thread refreshes while it is read; the thread ends when it is not.
 */
class TickingClockTests {

	private final AtomicLong source = new AtomicLong(1_000);

	@Test
	void theFirstReadReadsTheClockAndTheThreadThenFollowsIt() {
		TickingClock clock = new TickingClock(this.source::get, 1_000_000L, 50, "test-clock-follows");
		assertThat(clock.awake()).isFalse();

		assertThat(clock.recentMicros()).isEqualTo(1_000);
		assertThat(clock.awake()).isTrue();

		this.source.set(2_000);
		assertThat(clock.nowMicros()).isEqualTo(2_000);
		eventually(() -> clock.recentMicros() == 2_000);
	}

	@Test
	void theThreadEndsAfterAPeriodWithoutReadsAndTheNextReadStartsAnother() {
		TickingClock clock = new TickingClock(this.source::get, 1_000_000L, 5, "test-clock-ends");
		clock.recentMicros();
		eventually(() -> !clock.awake() && named("test-clock-ends") == null);
		assertThat(clock.starts()).isEqualTo(1);

		// No thread: the copy is not refreshed, and a read reads the clock itself.
		this.source.set(5_000);
		assertThat(clock.recentMicros()).isEqualTo(5_000);
		assertThat(clock.awake()).isTrue();
		assertThat(clock.starts()).isEqualTo(2);
		this.source.set(6_000);
		eventually(() -> clock.recentMicros() == 6_000);
	}

	@Test
	void anInterruptedThreadEndsAndTheNextReadStartsAnother() {
		TickingClock clock = new TickingClock(this.source::get, 1_000_000L, 60_000, "test-clock-interrupted");
		clock.recentMicros();
		eventually(() -> named("test-clock-interrupted") != null);
		named("test-clock-interrupted").interrupt();
		eventually(() -> !clock.awake() && named("test-clock-interrupted") == null);

		this.source.set(7_000);
		assertThat(clock.recentMicros()).isEqualTo(7_000);
		assertThat(clock.starts()).isEqualTo(2);
		this.source.set(8_000);
		eventually(() -> clock.recentMicros() == 8_000);
		named("test-clock-interrupted").interrupt();
	}

	@Test
	void theThreadKeepsTickingWhileTheCopyIsRead() {
		// Periods of half a second: reading without a pause for three of them never finds the thread stopped.
		TickingClock clock = new TickingClock(this.source::get, 1_000_000L, 500, "test-clock-kept");
		long end = System.nanoTime() + Duration.ofMillis(1_500).toNanos();
		while (System.nanoTime() < end) {
			clock.recentMicros();
			this.source.incrementAndGet();
		}
		assertThat(clock.starts()).isEqualTo(1);
		assertThat(clock.awake()).isTrue();
	}

	@Test
	void theSharedSystemClockTicksOnADaemonThreadAndFollowsTheSystemClock() {
		TimeSource ticking = TimeSource.ticking();
		assertThat(ticking).isSameAs(TimeSource.ticking());
		assertThat(ticking.ticks()).isTrue();
		long before = TimeSource.SYSTEM.nowMicros();
		ticking.recentMicros();
		eventually(() -> ticking.recentMicros() > before);
		assertThat(ticking.recentMicros()).isLessThanOrEqualTo(TimeSource.SYSTEM.nowMicros());
		Thread ticker = named("limiter-clock");
		assertThat(ticker).isNotNull();
		assertThat(ticker.isDaemon()).isTrue();
		assertThat(ticker.getContextClassLoader()).isNull();
	}

}
