package io.github.limiter.guard;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Given failures and successes at known times, the breaker opens, lets exactly one probe through, and closes or
 * reopens.
 */
class CircuitBreakerTests {

	private final AtomicLong nanos = new AtomicLong();

	private final CircuitBreaker breaker = new CircuitBreaker(3, Duration.ofSeconds(1), this.nanos::get);

	@Test
	void opensAfterConsecutiveFailuresOnly() {
		this.breaker.onFailure();
		this.breaker.onFailure();
		this.breaker.onSuccess();
		this.breaker.onFailure();
		this.breaker.onFailure();
		assertThat(this.breaker.state()).isEqualTo(CircuitBreaker.State.CLOSED);
		this.breaker.onFailure();
		assertThat(this.breaker.state()).isEqualTo(CircuitBreaker.State.OPEN);
		assertThat(this.breaker.tryAcquirePermission()).isFalse();
		assertThat(this.breaker.remainingOpen()).isEqualTo(Duration.ofSeconds(1));
	}

	@Test
	void letsOneProbeThroughAfterTheOpenPeriodAndClosesOnItsSuccess() {
		open();
		this.nanos.addAndGet(Duration.ofMillis(999).toNanos());
		assertThat(this.breaker.tryAcquirePermission()).isFalse();
		this.nanos.addAndGet(Duration.ofMillis(1).toNanos());
		assertThat(this.breaker.tryAcquirePermission()).as("the probe").isTrue();
		assertThat(this.breaker.tryAcquirePermission()).as("only one probe at a time").isFalse();
		assertThat(this.breaker.state()).isEqualTo(CircuitBreaker.State.HALF_OPEN);
		this.breaker.onSuccess();
		assertThat(this.breaker.state()).isEqualTo(CircuitBreaker.State.CLOSED);
		assertThat(this.breaker.tryAcquirePermission()).isTrue();
	}

	@Test
	void aFailedProbeReopensForAWholePeriod() {
		open();
		this.nanos.addAndGet(Duration.ofSeconds(1).toNanos());
		assertThat(this.breaker.tryAcquirePermission()).isTrue();
		this.breaker.onFailure();
		assertThat(this.breaker.state()).isEqualTo(CircuitBreaker.State.OPEN);
		this.nanos.addAndGet(Duration.ofMillis(500).toNanos());
		assertThat(this.breaker.tryAcquirePermission()).isFalse();
		this.nanos.addAndGet(Duration.ofMillis(500).toNanos());
		assertThat(this.breaker.tryAcquirePermission()).isTrue();
	}

	private void open() {
		for (int i = 0; i < 3; i++) {
			this.breaker.onFailure();
		}
		assertThat(this.breaker.state()).isEqualTo(CircuitBreaker.State.OPEN);
	}

}
