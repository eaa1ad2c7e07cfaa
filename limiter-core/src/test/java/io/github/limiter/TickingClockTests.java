package io.github.limiter;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The ticking clock: a recent reading that a thread refreshes while it is read, and that stops when it is not.
 */
class TickingClockTests {

	/** Waits on a loaded machine are bounded generously: the test asserts what happens, not how soon. */
	private static final Duration PATIENCE = Duration.ofSeconds(20);

	private final AtomicLong source = new AtomicLong(1_000);

	@Test
	void theFirstReadReadsTheClockAndTheThreadThenFollowsIt() {
		TickingClock clock = new TickingClock(this.source::get, 1_000_000L, 1_000_000, "test-clock-follows");
		assertThat(clock.awake()).isFalse();

		assertThat(clock.recentMicros()).isEqualTo(1_000);
		assertThat(clock.awake()).isTrue();

		this.source.set(2_000);
		assertThat(clock.nowMicros()).isEqualTo(2_000);
		eventually(() -> clock.recentMicros() == 2_000);
	}

	@Test
	void theThreadStopsAfterAPeriodWithoutReadsAndTheNextReadStartsItAgain() {
		TickingClock clock = new TickingClock(this.source::get, 1_000_000L, 5, "test-clock-stops");
		clock.recentMicros();
		eventually(() -> !clock.awake());
		assertThat(clock.starts()).isEqualTo(1);

		// Stopped: the copy is not refreshed, and a read reads the clock itself.
		this.source.set(5_000);
		assertThat(clock.recentMicros()).isEqualTo(5_000);
		assertThat(clock.awake()).isTrue();
		assertThat(clock.starts()).isEqualTo(2);
		this.source.set(6_000);
		eventually(() -> clock.recentMicros() == 6_000);
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
		Thread ticker = Thread.getAllStackTraces()
			.keySet()
			.stream()
			.filter((thread) -> thread.getName().equals("limiter-clock"))
			.findFirst()
			.orElseThrow();
		assertThat(ticker.isDaemon()).isTrue();
		assertThat(ticker.getContextClassLoader()).isNull();
	}

	private static void eventually(BooleanSupplier condition) {
		long deadline = System.nanoTime() + PATIENCE.toNanos();
		while (!condition.getAsBoolean()) {
			assertThat(System.nanoTime()).as("condition within " + PATIENCE).isLessThan(deadline);
			try {
				Thread.sleep(1);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				throw new IllegalStateException(ex);
			}
		}
	}

}
