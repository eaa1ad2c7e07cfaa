package io.github.limiter.backend.local;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import org.junit.jupiter.api.Test;

import io.github.limiter.Decision;
import io.github.limiter.LimitRequest;
import io.github.limiter.RateLimiter;
import io.github.limiter.TimeSource;
import io.github.limiter.algorithm.FixedWindow;
import io.github.limiter.algorithm.LeakyBucket;
import io.github.limiter.algorithm.SlidingWindowCounter;
import io.github.limiter.algorithm.SlidingWindowLog;
import io.github.limiter.algorithm.TokenBucket;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The local backend on a clock whose recent reading lags behind the present ({@link TimeSource#ticking()}): calls the
 * recent reading admits at once are decided on it; any other call is decided again at the present.
 */
class LocalBackendRecentClockTests {

	private static final long T0 = 1_700_000_000_000_000L;

	private static final long SECOND = 1_000_000L;

	private final LaggingClock clock = new LaggingClock();

	private final RateLimiter limiter = RateLimiter.of(LocalBackend.create(this.clock, 1000));

	@Test
	void aCallTheRecentReadingAdmitsIsDecidedOnIt() {
		TokenBucket bucket = TokenBucket.of("api", 2, 1, Duration.ofSeconds(1));
		this.clock.at(T0, T0 + 300_000);

		Decision first = this.limiter.acquire(bucket, "k");

		assertThat(first.allowed()).isTrue();
		assertThat(first.timeMicros()).isEqualTo(T0);
		assertThat(first.remaining()).isEqualTo(1);
	}

	@Test
	void aCallTheRecentReadingWouldRefuseIsDecidedAtThePresentWithAnExactRetryTime() {
		TokenBucket bucket = TokenBucket.of("api", 1, 1, Duration.ofSeconds(1));
		this.clock.at(T0, T0);
		assertThat(this.limiter.acquire(bucket, "k").allowed()).isTrue();

		// The recent reading stays at T0 (a late ticking thread); the present is a second later: the token is back.
		this.clock.at(T0, T0 + SECOND);
		Decision second = this.limiter.acquire(bucket, "k");
		assertThat(second.allowed()).isTrue();
		assertThat(second.timeMicros()).isEqualTo(T0 + SECOND);

		// Refused at the present too: the retry time counts from the present, not from the older reading.
		this.clock.at(T0, T0 + SECOND + 250_000);
		Decision third = this.limiter.acquire(bucket, "k");
		assertThat(third.allowed()).isFalse();
		assertThat(third.timeMicros()).isEqualTo(T0 + SECOND + 250_000);
		assertThat(third.retryAfterMicros()).isEqualTo(750_000);
		assertThat(this.limiter.tryAcquire(bucket, "k")).isFalse();
	}

	@Test
	void aPermitTakingLessThanTheLagIsStillServedAtItsRate() {
		// One permit every 100 us, no burst: a recent reading a millisecond old would admit one call per millisecond.
		TokenBucket bucket = TokenBucket.of("fine", 1, 1, Duration.ofNanos(100_000));
		int admitted = 0;
		for (long present = T0; present < T0 + 10_000; present += 100) {
			this.clock.at(present - present % 1_000, present);
			admitted += this.limiter.tryAcquire(bucket, "k") ? 1 : 0;
		}
		assertThat(admitted).isEqualTo(100);
	}

	@Test
	void aQueueingCallsDelayIsMeasuredAtThePresent() {
		LeakyBucket queue = LeakyBucket.queueing("queue", 10, Duration.ofSeconds(1), 5);
		this.clock.at(T0, T0);
		assertThat(this.limiter.acquire(queue, "k").delayMicros()).isZero();

		// 40 ms later, the next call waits for the rest of the first one's 100 ms; measured from the older reading it
		// would wait the whole 100 ms.
		this.clock.at(T0, T0 + 40_000);
		Decision queued = this.limiter.acquire(queue, "k");
		assertThat(queued.allowed()).isTrue();
		assertThat(queued.delayMicros()).isEqualTo(60_000);
		assertThat(queued.timeMicros()).isEqualTo(T0 + 40_000);
	}

	@Test
	void aDecisionOnSeveralLimitsThatOneWouldRefuseIsDecidedAtThePresent() {
		FixedWindow perSecond = FixedWindow.of("per-second", 1, Duration.ofSeconds(1));
		FixedWindow perHour = FixedWindow.of("per-hour", 100, Duration.ofHours(1));
		this.clock.at(T0, T0);
		assertThat(this.limiter.acquire(LimitRequest.of(perSecond, "k"), LimitRequest.of(perHour, "k")).allowed())
			.isTrue();

		this.clock.at(T0, T0 + SECOND);
		Decision next = this.limiter.acquire(LimitRequest.of(perSecond, "k"), LimitRequest.of(perHour, "k"));
		assertThat(next.allowed()).isTrue();
		assertThat(next.timeMicros()).isEqualTo(T0 + SECOND);
		assertThat(this.limiter.check(perHour, "k").remaining()).isEqualTo(100 - 2 - 1);
	}

	@Test
	void aBurstRightAfterAKeyWasUsedTakesAtMostTheRateTimesTheLagMore() {
		// The price of the recent reading, as TimeSource.ticking() documents it: 10 per second, a burst of 10.
		TokenBucket bucket = TokenBucket.of("api", 10, 10, Duration.ofSeconds(1));
		this.clock.at(T0, T0);
		assertThat(this.limiter.tryAcquire(bucket, "k")).isTrue();

		// Two seconds later the bucket is full again, but the recent reading lags by 1.95 s (far beyond a tick): the
		// key's state lies ahead of it, so 9 calls are counted from T0 + 50 ms, and the 10 that the present allows
		// follow: 19 where a precise clock admits 10, within 10 + 10 per second x 1.95 s.
		this.clock.at(T0 + 50_000, T0 + 2 * SECOND);
		int burst = 0;
		while (this.limiter.tryAcquire(bucket, "k")) {
			burst++;
		}
		assertThat(burst).isEqualTo(19);
	}

	@Test
	void onAClockThatDoesNotTickEveryDecisionReadsThePresent() {
		TimeSource presentOnly = new TimeSource() {

			@Override
			public long nowMicros() {
				return T0;
			}

			@Override
			public long recentMicros() {
				throw new AssertionError("a clock that does not tick is read at the present only");
			}

		};
		RateLimiter limiter = RateLimiter.of(LocalBackend.create(presentOnly, 1000));
		TokenBucket bucket = TokenBucket.of("api", 1, Duration.ofSeconds(1));
		FixedWindow window = FixedWindow.of("window", 5, Duration.ofSeconds(1));
		assertThat(limiter.acquire(bucket, "k").timeMicros()).isEqualTo(T0);
		assertThat(limiter.tryAcquire(bucket, "k")).isFalse();
		assertThat(limiter.acquire(LimitRequest.of(window, "k"), LimitRequest.of(bucket, "other")).allowed()).isTrue();
		assertThat(TimeSource.SYSTEM.ticks()).isFalse();
		assertThat(TimeSource.ticking().ticks()).isTrue();
	}

	@Test
	void aFixedWindowIsDecidedAtThePresentSoNoCallCountsInAWindowThatHasEnded() {
		// T0 starts a second. One call of two in that second; then the recent reading still lies in it while the present
		// is in the next: counted there, two calls pass and the third is refused. Counted on the recent reading, the
		// first would have taken the old second's last permit, and two more would have followed in the new one.
		FixedWindow perSecond = FixedWindow.of("per-second", 2, Duration.ofSeconds(1));
		this.clock.at(T0, T0);
		assertThat(this.limiter.tryAcquire(perSecond, "k")).isTrue();

		this.clock.at(T0 + 500_000, T0 + SECOND + 1_000);
		Decision first = this.limiter.acquire(perSecond, "k");
		assertThat(first.allowed()).isTrue();
		assertThat(first.timeMicros()).isEqualTo(T0 + SECOND + 1_000);
		assertThat(this.limiter.tryAcquire(perSecond, "k")).isTrue();
		assertThat(this.limiter.tryAcquire(perSecond, "k")).isFalse();
		Decision together = this.limiter.acquire(LimitRequest.of(perSecond, "j"),
				LimitRequest.of(TokenBucket.of("api", 10, Duration.ofSeconds(1)), "j"));
		assertThat(together.timeMicros()).isEqualTo(T0 + SECOND + 1_000);
	}

	@Test
	void aSlidingCounterIsDecidedAtThePresent() {
		SlidingWindowCounter counter = SlidingWindowCounter.of("counter", 10, Duration.ofSeconds(1));
		this.clock.at(T0, T0 + SECOND + 1_000);
		assertThat(this.limiter.acquire(counter, "k").timeMicros()).isEqualTo(T0 + SECOND + 1_000);
	}

	@Test
	void aSlidingLogIsDecidedAtThePresentSoItsEntriesDoNotExpireEarly() {
		// Two per second. Two calls while the recent reading lags 300 ms: stamped at the present, they hold their
		// permits until a second after it. Stamped 300 ms early, both would come back 300 ms early, and the two calls
		// 800 ms later would pass: four in 800 ms.
		SlidingWindowLog log = SlidingWindowLog.of("log", 2, Duration.ofSeconds(1));
		this.clock.at(T0, T0 + 300_000);
		Decision first = this.limiter.acquire(log, "k");
		assertThat(first.timeMicros()).isEqualTo(T0 + 300_000);
		assertThat(this.limiter.tryAcquire(log, "k")).isTrue();

		this.clock.at(T0 + 1_000_000, T0 + 1_100_000);
		assertThat(this.limiter.tryAcquire(log, "k")).isFalse();
		this.clock.at(T0 + 1_000_000, T0 + 1_300_000);
		assertThat(this.limiter.tryAcquire(log, "k")).isTrue();
	}

	@Test
	void underLoadNoWindowAdmitsMoreThanTheBucketPlusTheRateOverTheWindowAndTheLagSeen() throws Exception {
		// Eight callers and two spinning threads on the machine's cores, on the ticking system clock: the copy's lag is
		// whatever the machine makes it. Each admitted call records when it started and ended (system clock) and the
		// time it was decided at. For calls k before m in the key's order, GCRA gives m - k + 1 <= C + (d_m - d_k) / T,
		// with d_m at most m's end and d_k at least k's start less the lag: so the admitted calls inside any interval
		// [a, b] number at most C + (b - a + lag) / T, the lag being the largest (start - decision time) seen.
		TokenBucket bucket = TokenBucket.of("load", 50, 1000, Duration.ofSeconds(1));
		RateLimiter limiter = RateLimiter.of(LocalBackend.create(TimeSource.ticking(), 1000));
		long end = System.nanoTime() + Duration.ofSeconds(2).toNanos();
		ConcurrentLinkedQueue<long[]> admitted = new ConcurrentLinkedQueue<>();
		ExecutorService threads = Executors.newFixedThreadPool(10);
		try {
			List<Future<?>> work = new ArrayList<>();
			for (int t = 0; t < 2; t++) {
				work.add(threads.submit(() -> {
					long spun = 0;
					while (System.nanoTime() < end) {
						spun++;
					}
					return spun;
				}));
			}
			for (int t = 0; t < 8; t++) {
				work.add(threads.submit(() -> {
					while (System.nanoTime() < end) {
						long start = TimeSource.SYSTEM.nowMicros();
						Decision decision = limiter.acquire(bucket, "k");
						long finish = TimeSource.SYSTEM.nowMicros();
						if (decision.allowed()) {
							admitted.add(new long[] { start, finish, decision.timeMicros() });
						}
					}
					return null;
				}));
			}
			for (Future<?> future : work) {
				future.get();
			}
		}
		finally {
			threads.shutdownNow();
		}
		long[][] calls = admitted.toArray(new long[0][]);
		long lag = 0;
		for (long[] call : calls) {
			lag = Math.max(lag, call[0] - call[2]);
		}
		// The copy was in use: some calls were decided at a time before they started.
		assertThat(lag).isPositive();
		Arrays.sort(calls, Comparator.comparingLong((long[] call) -> call[0]));
		long interval = 1000;
		long capacity = 50;
		for (int i = 0; i < calls.length; i++) {
			long from = calls[i][0];
			long[] ends = new long[calls.length - i];
			for (int j = i; j < calls.length; j++) {
				ends[j - i] = calls[j][1];
			}
			Arrays.sort(ends);
			for (int k = 0; k < ends.length; k++) {
				long bound = capacity + Math.floorDiv(ends[k] - from + lag, interval);
				assertThat((long) k + 1).as("admitted calls within [%d, %d] us, lag %d us", from, ends[k], lag)
					.isLessThanOrEqualTo(bound);
			}
		}
		// The callers kept the bucket busy: about its capacity and rate over 2 s were admitted.
		assertThat(calls.length).isGreaterThan(500);
	}

	/** A recent reading and a present set by the test. */
	private static final class LaggingClock implements TimeSource {

		private volatile long recent;

		private volatile long now;

		void at(long recent, long now) {
			this.recent = recent;
			this.now = now;
		}

		@Override
		public long nowMicros() {
			return this.now;
		}

		@Override
		public long recentMicros() {
			return this.recent;
		}

		@Override
		public boolean ticks() {
			return true;
		}

	}

}
