package io.github.limiter.backend.local;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;

import io.github.limiter.Limit;
import io.github.limiter.LimitRequest;
import io.github.limiter.RateLimiter;
import io.github.limiter.TimeSource;
import io.github.limiter.algorithm.FixedWindow;
import io.github.limiter.algorithm.LeakyBucket;
import io.github.limiter.algorithm.SlidingWindowCounter;
import io.github.limiter.algorithm.SlidingWindowLog;
import io.github.limiter.algorithm.TokenBucket;
import io.github.limiter.testsupport.ManualClock;

import static org.assertj.core.api.Assertions.assertThat;

class LocalBackendTests {

	/** Expired keys go when asked, with no new key to start the sweep; keys whose state holds stay. */
	@Test
	void aSweepAskedForDropsTheExpiredKeysOnly() throws InterruptedException {
		io.github.limiter.testsupport.ManualClock clock = new io.github.limiter.testsupport.ManualClock(
				java.time.Instant.parse("2026-11-28T10:00:00.100Z"));
		LocalBackend backend = LocalBackend.create(clock, 1000);
		io.github.limiter.algorithm.FixedWindow second = io.github.limiter.algorithm.FixedWindow.of("second", 5,
				java.time.Duration.ofSeconds(1));
		io.github.limiter.algorithm.FixedWindow day = io.github.limiter.algorithm.FixedWindow.of("day", 5,
				java.time.Duration.ofDays(1));
		for (int i = 0; i < 100; i++) {
			backend.tryAcquire(io.github.limiter.LimitRequest.of(second, "user-" + i));
		}
		backend.tryAcquire(io.github.limiter.LimitRequest.of(day, "user-0"));
		clock.advance(java.time.Duration.ofSeconds(2));
		assertThat(backend.held()).isEqualTo(101);
		backend.sweepExpired();
		long giveUp = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(30);
		while (backend.held() > 1 && System.nanoTime() < giveUp) {
			Thread.sleep(10);
		}
		assertThat(backend.held()).as("the day's key holds").isEqualTo(1);
	}

	@Test
	void keepsAtMostMaxKeys() {
		LocalBackend backend = LocalBackend.create(TimeSource.SYSTEM, 1000);
		RateLimiter limiter = RateLimiter.of(backend);
		Limit limit = FixedWindow.of("many", 1, Duration.ofHours(1));
		for (int i = 0; i < 10_000; i++) {
			limiter.acquire(limit, "user-" + i);
			assertThat(backend.size()).isLessThanOrEqualTo(1001);
		}
	}

	@Test
	void longKeysAreKeptAsDigestsSoTheBoundOnKeysBoundsMemory() {
		// A review's flood of new 4,000-character keys on a weekly limit kept 3.6 KB per key, and ran a 192 MB heap
		// out before half the default bound. Kept as digests, 20,000 of them hold a few MB.
		LocalBackend backend = LocalBackend.create();
		RateLimiter limiter = RateLimiter.of(backend);
		Limit weekly = SlidingWindowLog.of("long-keys", 3, Duration.ofDays(7));
		String filler = "k".repeat(4000);
		long before = usedAfterGc();
		for (int i = 0; i < 20_000; i++) {
			assertThat(limiter.acquire(weekly, filler + i).allowed()).isTrue();
		}
		long retained = usedAfterGc() - before;
		assertThat(backend.size()).isEqualTo(20_000);
		assertThat(retained).as("bytes retained by 20,000 keys of 4,000 characters").isLessThan(40L << 20);
	}

	@Test
	void aLongKeyAndAKeyEqualToItsDigestAreDistinct() {
		RateLimiter limiter = RateLimiter.of(LocalBackend.create());
		// Without boundaries: on the real clock, a fixed window would start afresh at a minute boundary between the calls.
		Limit once = SlidingWindowLog.of("digests", 1, Duration.ofMinutes(1));
		String victim = "v".repeat(100);
		assertThat(limiter.acquire(once, victim).allowed()).isTrue();
		assertThat(limiter.acquire(once, io.github.limiter.backend.redis.KeyLayout.material(victim)).allowed())
			.as("a key chosen to equal the victim's digest is a key of its own").isTrue();
		assertThat(limiter.acquire(once, victim + "!").allowed()).as("another long key").isTrue();
		assertThat(limiter.acquire(once, victim).allowed()).isFalse();
	}

	private static long usedAfterGc() {
		Runtime runtime = Runtime.getRuntime();
		for (int i = 0; i < 3; i++) {
			System.gc();
		}
		return runtime.totalMemory() - runtime.freeMemory();
	}

	@Test
	void aFloodOfNewKeysDoesNotResetAVictimsFailureCount() {
		// The attack: three failed logins lock the victim out; the attacker floods the backend with new keys, a full
		// bound at a time, and tries the victim's password again, hoping the flood pushed the count out.
		LocalBackend backend = LocalBackend.create(TimeSource.SYSTEM, 1000);
		RateLimiter limiter = RateLimiter.of(backend);
		Limit failures = SlidingWindowLog.of("login-failures", 3, Duration.ofMinutes(10));
		for (int i = 0; i < 1000; i++) {
			// A running application: the backend already holds as many keys as it may.
			limiter.record(failures, "user-" + i);
		}
		for (int i = 0; i < 3; i++) {
			assertThat(limiter.check(failures, "victim").allowed()).isTrue();
			limiter.record(failures, "victim");
		}
		for (int round = 0; round < 20; round++) {
			for (int i = 0; i < 1000; i++) {
				limiter.record(failures, "attacker-" + round + "-" + i);
			}
			assertThat(backend.size()).isLessThanOrEqualTo(1000);
			assertThat(limiter.check(failures, "victim").allowed())
				.as("after %d floods of new keys, the victim is still locked out", round + 1)
				.isFalse();
		}
	}

	@Test
	void dropsKeysWhoseStateExpired() {
		ManualClock clock = new ManualClock(Instant.parse("2026-01-01T00:00:00Z"));
		LocalBackend backend = LocalBackend.create(clock, 100);
		RateLimiter limiter = RateLimiter.of(backend);
		Limit limit = TokenBucket.of("idle", 1, Duration.ofSeconds(1));
		for (int i = 0; i < 100; i++) {
			limiter.acquire(limit, "old-" + i);
		}
		clock.advance(Duration.ofSeconds(2));
		limiter.acquire(limit, "new");
		assertThat(backend.size()).isEqualTo(1);
	}

	@Test
	void aStateKeptAcrossARetunedLimitExpiresByTheNewNumbers() {
		ManualClock clock = new ManualClock(Instant.parse("2026-01-01T00:00:00Z"));
		LocalBackend backend = LocalBackend.create(clock, 100);
		RateLimiter limiter = RateLimiter.of(backend);
		limiter.acquire(SlidingWindowLog.of("retuned", 5, Duration.ofSeconds(1)), "k");
		// Retuned to a window of an hour: same name and algorithm, so the same key and state.
		SlidingWindowLog hourly = SlidingWindowLog.of("retuned", 5, Duration.ofHours(1));
		limiter.acquire(hourly, "k");
		limiter.acquire(hourly, "k");
		clock.advance(Duration.ofSeconds(2));
		assertThat(backend.size()).as("the hour's log is not swept by the second's numbers").isEqualTo(1);
		// The three calls of the last hour count: this one is the fourth of 5.
		assertThat(limiter.acquire(hourly, "k").remaining()).isEqualTo(1);
	}

	@Test
	void evictionNeverLosesAConcurrentUpdate() throws Exception {
		LocalBackend backend = LocalBackend.create(TimeSource.SYSTEM, 50);
		RateLimiter limiter = RateLimiter.of(backend);
		Limit hot = SlidingWindowLog.of("hot", 500, Duration.ofHours(1));
		Limit cold = FixedWindow.of("cold", 1, Duration.ofHours(1));
		AtomicInteger admitted = new AtomicInteger();
		ExecutorService pool = Executors.newFixedThreadPool(8);
		List<Future<?>> tasks = new ArrayList<>();
		for (int t = 0; t < 8; t++) {
			int thread = t;
			tasks.add(pool.submit(() -> {
				for (int i = 0; i < 200; i++) {
					if (limiter.acquire(hot, "k").allowed()) {
						admitted.incrementAndGet();
					}
					limiter.acquire(cold, thread + "-" + i);
				}
			}));
		}
		for (Future<?> task : tasks) {
			task.get();
		}
		pool.shutdown();
		// Eviction may forget the hot key (which only admits more), but never loses the bound on memory, and no
		// update lands in an evicted entry: a caller that finds its entry evicted retries on a live one.
		assertThat(admitted.get()).isGreaterThanOrEqualTo(500);
		assertThat(backend.size()).isLessThanOrEqualTo(50 + 8);
	}

	@Test
	void thirtyTwoThreadsNeverOverAdmit() throws Exception {
		LocalBackend backend = LocalBackend.create();
		RateLimiter limiter = RateLimiter.of(backend);
		List<Limit> limits = List.of(FixedWindow.of("fw", 200, Duration.ofDays(3650)),
				SlidingWindowLog.of("log", 200, Duration.ofHours(1)),
				SlidingWindowCounter.of("counter", 200, Duration.ofDays(3650)),
				TokenBucket.of("bucket", 200, 200, Duration.ofHours(1)),
				LeakyBucket.nodelay("leaky", 200, Duration.ofHours(1), 199));
		ExecutorService pool = Executors.newFixedThreadPool(32);
		try {
			for (Limit limit : limits) {
				AtomicInteger admitted = new AtomicInteger();
				List<Future<?>> tasks = new ArrayList<>();
				for (int t = 0; t < 32; t++) {
					tasks.add(pool.submit(() -> {
						for (int i = 0; i < 20; i++) {
							if (limiter.acquire(LimitRequest.of(limit, "hot"), LimitRequest.of(limit, "other")).allowed()) {
								admitted.incrementAndGet();
							}
						}
					}));
				}
				for (Future<?> task : tasks) {
					task.get();
				}
				assertThat(admitted.get()).as(limit.toString()).isEqualTo(200);
			}
		}
		finally {
			pool.shutdown();
		}
	}

	@Test
	void singleMultiAndAnswerOnlyDecisionsOnSharedKeysNeverOverAdmit() throws Exception {
		RateLimiter limiter = RateLimiter.of(LocalBackend.create());
		Limit shared = TokenBucket.of("shared", 2000, Duration.ofHours(1));
		// Without boundaries, so that its count holds to the end: on the real clock, an epoch-aligned fixed window would
		// start afresh at an hour boundary.
		Limit second = SlidingWindowLog.of("second", 100_000, Duration.ofHours(1));
		AtomicInteger alone = new AtomicInteger();
		AtomicInteger together = new AtomicInteger();
		ExecutorService threads = Executors.newFixedThreadPool(8);
		try {
			List<Future<?>> work = new ArrayList<>();
			for (int t = 0; t < 8; t++) {
				boolean multi = t % 2 == 0;
				boolean answerOnly = t % 4 == 1;
				work.add(threads.submit(() -> {
					for (int i = 0; i < 500; i++) {
						if (multi) {
							if (limiter.acquire(LimitRequest.of(shared, "k"), LimitRequest.of(second, "k")).allowed()) {
								together.incrementAndGet();
							}
						}
						else if (answerOnly ? limiter.tryAcquire(shared, "k") : limiter.acquire(shared, "k").allowed()) {
							alone.incrementAndGet();
						}
					}
				}));
			}
			for (Future<?> future : work) {
				future.get();
			}
		}
		finally {
			threads.shutdownNow();
		}
		// 4,000 calls on a bucket of 2,000 that refills one token every 1.8 s: 2,000 admitted, give or take a refill.
		assertThat(alone.get() + together.get()).isBetween(2000, 2001);
		// A check reports what would remain after taking one more.
		assertThat(limiter.check(second, "k").remaining()).isEqualTo(100_000 - together.get() - 1);
	}

}
