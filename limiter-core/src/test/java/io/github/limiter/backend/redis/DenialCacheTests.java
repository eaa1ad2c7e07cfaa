package io.github.limiter.backend.redis;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

import io.github.limiter.Decision;
import io.github.limiter.algorithm.FixedWindow;

import static org.assertj.core.api.Assertions.assertThat;

/** Remembered rejections are good for a second at most, and what a flood of them left goes soon after. */
class DenialCacheTests {

	private static final FixedWindow LIMIT = FixedWindow.of("flood", 1, Duration.ofHours(1));

	@Test
	void expiredRejectionsGoWithoutWaitingForTheCacheToFill() throws InterruptedException {
		DenialCache cache = new DenialCache(100_000);
		for (int i = 0; i < 500; i++) {
			cache.remember("key-" + i, LIMIT, 1, rejection(), 0, cache.generation());
		}
		assertThat(cache.size()).isEqualTo(500);
		// Two seconds later, on the monotonic clock: every entry expired, and the next rejection remembered sweeps them.
		cache.remember("later", LIMIT, 1, rejection(), 2_000_000, cache.generation());
		long giveUp = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
		while (cache.size() > 1 && System.nanoTime() < giveUp) {
			Thread.sleep(10);
		}
		assertThat(cache.size()).isEqualTo(1);
		assertThat(cache.lookup("later", LIMIT, 1, 2_000_001, true)).isNotNull();
	}

	/** A full cache makes room at once from what expired, whatever the background sweep did a moment before. */
	@Test
	void aFullCacheMakesRoomFromWhatExpired() {
		DenialCache cache = new DenialCache(3);
		for (int i = 0; i < 3; i++) {
			cache.remember("key-" + i, LIMIT, 1, shortRejection(), i, cache.generation());
		}
		cache.remember("later", LIMIT, 1, shortRejection(), 100_000, cache.generation());
		assertThat(cache.lookup("later", LIMIT, 1, 100_001, true)).isNotNull();
	}

	/** Retry in 10 ms: remembered for 10 ms. */
	private static Decision shortRejection() {
		return Decision.of(LIMIT.name(), false, 1, 0, 10_000, 10_000, 0, 1_764_000_000_000_000L, null);
	}

	private static Decision rejection() {
		return Decision.of(LIMIT.name(), false, 1, 0, 3_600_000_000L, 3_600_000_000L, 0, 1_764_000_000_000_000L, null);
	}

}
