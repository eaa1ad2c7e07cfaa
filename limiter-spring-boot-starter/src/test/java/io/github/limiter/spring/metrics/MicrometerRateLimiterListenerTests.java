package io.github.limiter.spring.metrics;

import java.time.Duration;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;

import io.github.limiter.RateLimiter;
import io.github.limiter.algorithm.FixedWindow;
import io.github.limiter.algorithm.TokenBucket;
import io.github.limiter.backend.local.LocalBackend;

import static org.assertj.core.api.Assertions.assertThat;

/** What the counters say after known calls, limits used in code included. */
class MicrometerRateLimiterListenerTests {

	private final MeterRegistry registry = new SimpleMeterRegistry();

	private final RateLimiter limiter = RateLimiter.of(LocalBackend.create())
		.withListener(new MicrometerRateLimiterListener(() -> this.registry, "local"));

	private double count(String limit, String algorithm, String outcome) {
		var counter = this.registry.find(MicrometerRateLimiterListener.DECISIONS)
			.tag("limit", limit)
			.tag("algorithm", algorithm)
			.tag("outcome", outcome)
			.counter();
		return (counter != null) ? counter.count() : 0;
	}

	@Test
	void oneNameUsedWithTwoAlgorithmsIsCountedUnderEach() {
		this.limiter.acquire(FixedWindow.of("w", 3, Duration.ofMinutes(1)), "k");
		this.limiter.acquire(FixedWindow.of("w", 3, Duration.ofMinutes(1)), "k");
		this.limiter.acquire(TokenBucket.of("w", 3, Duration.ofMinutes(1)), "k");
		assertThat(count("w", "fixed-window", "allowed")).isEqualTo(2);
		assertThat(count("w", "token-bucket", "allowed")).isEqualTo(1);
	}

	@Test
	void aDeclaredLimitKeepsItsNameWhateverTheNamesMadeInCodeBeforeIt() {
		RateLimiter limiter = RateLimiter.of(LocalBackend.create())
			.withListener(new MicrometerRateLimiterListener(() -> this.registry, "local", "declared"::equals));
		for (int i = 0; i < MicrometerRateLimiterListener.MAX_LIMITS + 5; i++) {
			limiter.acquire(TokenBucket.of("user-" + i, 1, Duration.ofMinutes(1)), "k");
		}
		limiter.acquire(TokenBucket.of("declared", 1, Duration.ofMinutes(1)), "k");
		assertThat(count("declared", "token-bucket", "allowed")).isEqualTo(1);
		assertThat(count(MicrometerRateLimiterListener.OTHER, "token-bucket", "allowed")).isEqualTo(5);
	}

	@Test
	void namesMadePerCallBeyondTheBoundAreCountedTogether() {
		int names = MicrometerRateLimiterListener.MAX_LIMITS + 500;
		for (int i = 0; i < names; i++) {
			this.limiter.acquire(TokenBucket.of("user-" + i, 1, Duration.ofMinutes(1)), "k");
		}
		assertThat(this.registry.find(MicrometerRateLimiterListener.DECISIONS).counters())
			.hasSize(MicrometerRateLimiterListener.MAX_LIMITS + 1);
		assertThat(count("user-0", "token-bucket", "allowed")).isEqualTo(1);
		assertThat(count(MicrometerRateLimiterListener.OTHER, "token-bucket", "allowed")).isEqualTo(500);
	}

}
