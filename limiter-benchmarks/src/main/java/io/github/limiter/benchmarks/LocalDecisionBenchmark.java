package io.github.limiter.benchmarks;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import io.github.bucket4j.Bandwidth;
import io.github.bucket4j.Bucket;
import io.github.resilience4j.ratelimiter.RateLimiterConfig;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

import io.github.limiter.Limit;
import io.github.limiter.RateLimiter;
import io.github.limiter.TimeSource;
import io.github.limiter.algorithm.FixedWindow;
import io.github.limiter.algorithm.LeakyBucket;
import io.github.limiter.algorithm.SlidingWindowCounter;
import io.github.limiter.algorithm.SlidingWindowLog;
import io.github.limiter.algorithm.TokenBucket;
import io.github.limiter.backend.local.LocalBackend;

/**
 * One in-process decision on a token bucket that never runs dry, next to Guava's {@code RateLimiter}, a local
 * Bucket4j bucket and Resilience4j's {@code RateLimiter}: the cost of asking, not of waiting.
 *
 * <p>The peers' plain benchmarks hold one limiter object and look nothing up; ours finds the key's state first. The
 * {@code PerKey} benchmarks give Bucket4j and Resilience4j what a keyed limit needs: their limiter found by key in a
 * bounded Caffeine cache, as applications (and Bucket4j's Spring Boot starter) hold one per user. The
 * {@code limiterTicking} benchmarks decide on {@link TimeSource#ticking()}, a clock reading refreshed by a thread
 * (no clock read when a call is admitted); the others on the system clock, read for every decision.
 *
 * <p>The {@code Mixed} benchmarks decide the same bucket in a JVM that has also decided the other algorithms on the
 * same backend, as an application with several kinds of limits does: the compiler then sees several classes where a
 * decision asks its limit, and what it can keep off the heap is what such an application gets. The others measure a
 * JVM that only ever decides one token bucket, the best case.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class LocalDecisionBenchmark {

	private RateLimiter limiter;

	private RateLimiter ticking;

	private TokenBucket bucket;

	/** A bucket its key has emptied for the hour: every call is refused. */
	private TokenBucket empty;

	private com.google.common.util.concurrent.RateLimiter guava;

	private Bucket bucket4j;

	private io.github.resilience4j.ratelimiter.RateLimiter resilience4j;

	private Cache<String, Bucket> bucket4jPerKey;

	private Cache<String, io.github.resilience4j.ratelimiter.RateLimiter> resilience4jPerKey;

	@Setup
	public void setUp() {
		this.bucket4jPerKey = Caffeine.newBuilder().maximumSize(LocalBackend.DEFAULT_MAX_KEYS).build();
		this.resilience4jPerKey = Caffeine.newBuilder().maximumSize(LocalBackend.DEFAULT_MAX_KEYS).build();
		this.limiter = RateLimiter.of(LocalBackend.create());
		this.ticking = RateLimiter.of(LocalBackend.create(TimeSource.ticking(), LocalBackend.DEFAULT_MAX_KEYS));
		this.bucket = neverDry();
		this.empty = TokenBucket.of("empty", 1, Duration.ofHours(1));
		this.limiter.tryAcquire(this.empty, "k");
		this.ticking.tryAcquire(this.empty, "k");
		this.guava = com.google.common.util.concurrent.RateLimiter.create(1e9);
		this.bucket4j = Bucket.builder()
			.addLimit(Bandwidth.builder().capacity(1_000_000_000L).refillGreedy(1_000_000_000L, Duration.ofSeconds(1)).build())
			.build();
		this.resilience4j = io.github.resilience4j.ratelimiter.RateLimiter.of("bench",
				RateLimiterConfig.custom()
					.limitForPeriod(1_000_000_000)
					.limitRefreshPeriod(Duration.ofSeconds(1))
					.timeoutDuration(Duration.ZERO)
					.build());
	}

	@Benchmark
	public boolean limiter() {
		return this.limiter.acquire(this.bucket, "k").allowed();
	}

	@Benchmark
	public boolean limiterTryAcquire() {
		return this.limiter.tryAcquire(this.bucket, "k");
	}

	@Benchmark
	public boolean limiterTicking() {
		return this.ticking.acquire(this.bucket, "k").allowed();
	}

	@Benchmark
	public boolean limiterTickingTryAcquire() {
		return this.ticking.tryAcquire(this.bucket, "k");
	}

	@Benchmark
	public boolean limiterRefused() {
		return this.limiter.tryAcquire(this.empty, "k");
	}

	@Benchmark
	public boolean limiterTickingRefused() {
		return this.ticking.tryAcquire(this.empty, "k");
	}

	@Benchmark
	public boolean limiterTickingMixed(Mixed mixed) {
		return mixed.limiter.acquire(mixed.bucket, "k").allowed();
	}

	@Benchmark
	public boolean limiterTickingTryAcquireMixed(Mixed mixed) {
		return mixed.limiter.tryAcquire(mixed.bucket, "k");
	}

	@Benchmark
	public boolean guava() {
		return this.guava.tryAcquire();
	}

	@Benchmark
	public boolean bucket4j() {
		return this.bucket4j.tryConsume(1);
	}

	@Benchmark
	public boolean resilience4j() {
		return this.resilience4j.acquirePermission();
	}

	@Benchmark
	public boolean bucket4jPerKey() {
		return this.bucket4jPerKey.get("k", key -> this.bucket4j).tryConsume(1);
	}

	@Benchmark
	public boolean resilience4jPerKey() {
		return this.resilience4jPerKey.get("k", key -> this.resilience4j).acquirePermission();
	}

	/** The bucket every limiter benchmark decides: a billion a second, so that it never runs dry. */
	private static TokenBucket neverDry() {
		return TokenBucket.of("bench", 1_000_000_000L, 1_000_000_000L, Duration.ofSeconds(1));
	}

	/**
	 * A ticking backend that has decided every algorithm, each on a few keys, 300,000 times over, interleaved with
	 * the bucket measured, before the measurement starts.
	 */
	@State(Scope.Benchmark)
	public static class Mixed {

		private RateLimiter limiter;

		private TokenBucket bucket;

		@Setup
		public void setUp() {
			this.limiter = RateLimiter.of(LocalBackend.create(TimeSource.ticking(), LocalBackend.DEFAULT_MAX_KEYS));
			this.bucket = neverDry();
			List<Limit> others = List.of(FixedWindow.of("fixed", 1_000_000_000L, Duration.ofSeconds(1)),
					SlidingWindowCounter.of("counter", 1_000_000_000L, Duration.ofSeconds(1)),
					LeakyBucket.nodelay("leaky", 1_000_000, Duration.ofSeconds(1), 1_000),
					TokenBucket.of("warming", 1_000, 1_000_000, Duration.ofSeconds(1)).withWarmup(Duration.ofSeconds(1)),
					SlidingWindowLog.of("log", 100, Duration.ofMillis(10)));
			for (int i = 0; i < 300_000; i++) {
				Limit other = others.get(i % others.size());
				this.limiter.tryAcquire(other, "k" + (i % 7));
				this.limiter.acquire(other, "k" + (i % 7));
				this.limiter.tryAcquire(this.bucket, "k");
				this.limiter.acquire(this.bucket, "k");
			}
		}

	}

}
