package io.github.limiter.testsupport;

import java.io.BufferedWriter;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import io.github.limiter.Limit;
import io.github.limiter.LimitRequest;
import io.github.limiter.Operation;
import io.github.limiter.algorithm.FixedWindow;
import io.github.limiter.algorithm.SlidingWindowLog;
import io.github.limiter.algorithm.TokenBucket;
import io.github.limiter.backend.redis.RedisScriptBackend;
import io.github.limiter.backend.redis.spring.SpringDataRedisScriptExecutor;

/**
 * One application instance of the multi-process test: threads deciding on a hot key and many warm keys against a
 * Redis, writing every admitted decision (limit, key, Redis time) to a file for the oracle.
 *
 * <p>Arguments: Redis port, key prefix, threads, decisions per thread, output file.
 */
public final class LoadWorker {

	/** Exact: at most 100 in any 100 ms. */
	public static final SlidingWindowLog HOT_LOG = SlidingWindowLog.of("hot-log", 100, Duration.ofMillis(100));

	/** Exact: GCRA, bursts of 50 and 1000 per second. */
	public static final TokenBucket HOT_BUCKET = TokenBucket.of("hot-bucket", 50, 1000, Duration.ofSeconds(1));

	/** Exact per window: 5 per 100 ms on each of 500 warm keys. */
	public static final FixedWindow WARM = FixedWindow.of("warm", 5, Duration.ofMillis(100));

	/** Number of warm keys. */
	public static final int WARM_KEYS = 500;

	private LoadWorker() {
	}

	public static void main(String[] args) throws Exception {
		int port = Integer.parseInt(args[0]);
		String prefix = args[1];
		int threads = Integer.parseInt(args[2]);
		int decisions = Integer.parseInt(args[3]);
		Path output = Path.of(args[4]);
		LettuceConnectionFactory factory = new LettuceConnectionFactory(new RedisStandaloneConfiguration("127.0.0.1", port));
		factory.afterPropertiesSet();
		factory.start();
		RedisScriptBackend backend = SpringDataRedisScriptExecutor.backend(factory, Runnable::run).keyPrefix(prefix).build();
		ExecutorService pool = Executors.newFixedThreadPool(threads);
		List<Future<List<String>>> results = new ArrayList<>();
		for (int t = 0; t < threads; t++) {
			int thread = t;
			results.add(pool.submit(() -> {
				List<String> admitted = java.util.Collections.synchronizedList(new ArrayList<>());
				// Up to 16 decisions in flight per thread: 8 threads × 16 pipelined callers per instance.
				java.util.concurrent.Semaphore inFlight = new java.util.concurrent.Semaphore(16);
				for (int i = 0; i < decisions; i++) {
					Limit limit;
					String key;
					switch (i % 3) {
						case 0 -> {
							limit = HOT_LOG;
							key = "hot";
						}
						case 1 -> {
							limit = HOT_BUCKET;
							key = "hot";
						}
						default -> {
							limit = WARM;
							key = "w" + ((thread * 7919 + i) % WARM_KEYS);
						}
					}
					inFlight.acquire();
					String name = limit.name();
					String admittedKey = key;
					backend.decideAsync(List.of(LimitRequest.of(limit, key)), Operation.ACQUIRE)
						.whenComplete((decision, failure) -> {
							if (failure == null && decision.allowed()) {
								admitted.add(name + ' ' + admittedKey + ' ' + decision.timeMicros());
							}
							inFlight.release();
						});
				}
				inFlight.acquire(16);
				return admitted;
			}));
		}
		try (BufferedWriter out = Files.newBufferedWriter(output)) {
			for (Future<List<String>> result : results) {
				for (String line : result.get()) {
					out.write(line);
					out.newLine();
				}
			}
		}
		pool.shutdown();
		factory.destroy();
		System.out.println("wall clock " + java.time.Instant.now());
	}

}
