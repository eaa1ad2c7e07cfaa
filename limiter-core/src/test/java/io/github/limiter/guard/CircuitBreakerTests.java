package io.github.limiter.guard;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Given probes that answer or fail at known times, the breaker opens and closes only on probes: one probe at a time,
 * and while open one per open period.
 */
class CircuitBreakerTests {

	private final AtomicLong nanos = new AtomicLong();

	private final CircuitBreaker breaker = new CircuitBreaker(Duration.ofSeconds(1), this.nanos::get);

	@Test
	void aClosedBreakerSendsOneProbeAtATimeAndStaysClosedWhenItAnswers() {
		assertThat(this.breaker.isClosed()).isTrue();
		assertThat(this.breaker.tryStartProbe()).as("a suspicion's probe").isTrue();
		assertThat(this.breaker.tryStartProbe()).as("only one probe in flight").isFalse();
		assertThat(this.breaker.probeSucceeded()).as("it was not open").isFalse();
		assertThat(this.breaker.state()).isEqualTo(CircuitBreaker.State.CLOSED);
		assertThat(this.breaker.tryStartProbe()).as("the next suspicion may probe again").isTrue();
	}

	@Test
	void aProbeThatProvesNothingLeavesTheBreakerAsItIs() {
		assertThat(this.breaker.tryStartProbe()).isTrue();
		this.breaker.probeInconclusive();
		assertThat(this.breaker.state()).isEqualTo(CircuitBreaker.State.CLOSED);
		assertThat(this.breaker.tryStartProbe()).as("the slot is free again").isTrue();
	}

	@Test
	void aFailedProbeOpensTheBreakerForAWholePeriod() {
		open();
		assertThat(this.breaker.isClosed()).isFalse();
		assertThat(this.breaker.remainingOpen()).isEqualTo(Duration.ofSeconds(1));
		this.nanos.addAndGet(Duration.ofMillis(999).toNanos());
		assertThat(this.breaker.tryStartProbe()).isFalse();
		this.nanos.addAndGet(Duration.ofMillis(1).toNanos());
		assertThat(this.breaker.tryStartProbe()).as("the probe after the open period").isTrue();
		assertThat(this.breaker.state()).isEqualTo(CircuitBreaker.State.HALF_OPEN);
		assertThat(this.breaker.tryStartProbe()).as("only one probe at a time").isFalse();
		assertThat(this.breaker.probeFailed()).as("it was open already").isFalse();
		this.nanos.addAndGet(Duration.ofMillis(500).toNanos());
		assertThat(this.breaker.tryStartProbe()).as("a failed probe starts another period").isFalse();
		this.nanos.addAndGet(Duration.ofMillis(500).toNanos());
		assertThat(this.breaker.tryStartProbe()).isTrue();
		assertThat(this.breaker.probeSucceeded()).as("the probe closes it").isTrue();
		assertThat(this.breaker.state()).isEqualTo(CircuitBreaker.State.CLOSED);
		assertThat(this.breaker.remainingOpen()).isZero();
	}

	@Test
	void onlyAProbeClosesAnOpenBreaker() {
		open();
		this.nanos.addAndGet(Duration.ofMinutes(1).toNanos());
		assertThat(this.breaker.isClosed()).as("time alone does not close it").isFalse();
		assertThat(this.breaker.inStateFor()).isEqualTo(Duration.ofMinutes(1));
	}

	private void open() {
		assertThat(this.breaker.tryStartProbe()).isTrue();
		assertThat(this.breaker.probeFailed()).as("this probe opened it").isTrue();
		assertThat(this.breaker.state()).isEqualTo(CircuitBreaker.State.OPEN);
	}

}
