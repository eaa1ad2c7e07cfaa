package io.github.limiter.benchmarks;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;

import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

import io.github.limiter.RateLimiter;
import io.github.limiter.algorithm.TokenBucket;
import io.github.limiter.backend.redis.LimiterScript;
import io.github.limiter.backend.redis.RedisScriptBackend;
import io.github.limiter.backend.redis.RedisScriptExecutor;

/**
 * What the Redis backend costs in this JVM, Redis and the client library left out: one decision on a token bucket,
 * through the denial cache, a lane, the script's encoder and decoder, on an executor that answers at once with an
 * admission for every decision sent. Many keys round-robin, as in the harness's many-keys workload.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class ClientPathBenchmark {

	private static final int KEYS = 10_000;

	private RateLimiter limiter;

	private TokenBucket bucket;

	private String[] keys;

	private int next;

	@Setup
	public void setUp() {
		this.limiter = RateLimiter.of(RedisScriptBackend.builder(new AdmittingExecutor()).build());
		this.bucket = TokenBucket.of("bench", 1_000_000_000L, 1_000_000_000L, Duration.ofSeconds(1));
		this.keys = new String[KEYS];
		for (int i = 0; i < KEYS; i++) {
			this.keys[i] = "user-" + i;
		}
	}

	@Benchmark
	public boolean acquire() {
		String key = this.keys[this.next];
		this.next = (this.next + 1) % KEYS;
		return this.limiter.acquire(this.bucket, key).allowed();
	}

	/** Answers every call at once, as the script would: one admission per key, each decision on one limit. */
	private static final class AdmittingExecutor implements RedisScriptExecutor {

		@Override
		public CompletionStage<List<Object>> execute(LimiterScript script, List<String> keys, List<String> args) {
			StringBuilder reply = new StringBuilder("1700000000000000");
			for (int i = 0; i < keys.size(); i++) {
				reply.append(" 1 999999999 0 1 0");
			}
			return CompletableFuture.completedFuture(List.of(reply.toString().getBytes(StandardCharsets.US_ASCII)));
		}

		@Override
		public boolean isCluster() {
			return false;
		}

	}

}
