package io.github.limiter.guard;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import io.github.limiter.Decision;
import io.github.limiter.Limit;
import io.github.limiter.LimitRequest;
import io.github.limiter.Operation;
import io.github.limiter.algorithm.FixedWindow;
import io.github.limiter.backend.redis.RedisScriptBackend;
import io.github.limiter.backend.redis.spring.SpringDataRedisScriptExecutor;
import io.github.limiter.testsupport.RedisProcess;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Redis killed and restarted on the same port, and its script cache flushed again and again, under load.
 */
class RedisRestartTests {

	private final Limit limit = FixedWindow.of("restart", 1_000_000_000, Duration.ofDays(3650));

	@Test
	void scriptFlushesUnderLoadNeverReachCallers() throws Exception {
		try (RedisProcess redis = RedisProcess.start()) {
			LettuceConnectionFactory factory = factory(redis.port());
			try {
				RedisScriptBackend backend = SpringDataRedisScriptExecutor.backend(factory, Runnable::run).build();
				AtomicBoolean running = new AtomicBoolean(true);
				AtomicInteger errors = new AtomicInteger();
				AtomicInteger decided = new AtomicInteger();
				ExecutorService pool = Executors.newFixedThreadPool(9);
				List<Future<?>> load = new ArrayList<>();
				for (int t = 0; t < 8; t++) {
					load.add(pool.submit(() -> {
						while (running.get()) {
							try {
								backend.decide(List.of(LimitRequest.of(this.limit, "k")), Operation.ACQUIRE);
								decided.incrementAndGet();
							}
							catch (RuntimeException ex) {
								errors.incrementAndGet();
							}
						}
					}));
				}
				int flushes = 0;
				long end = System.nanoTime() + Duration.ofSeconds(2).toNanos();
				while (System.nanoTime() < end) {
					redis.command("SCRIPT", "FLUSH");
					flushes++;
					Thread.sleep(20);
				}
				running.set(false);
				for (Future<?> future : load) {
					future.get();
				}
				pool.shutdown();
				assertThat(errors.get()).as("errors reaching callers in %s decisions across %s flushes", decided.get(), flushes)
					.isZero();
				assertThat(decided.get()).isGreaterThan(100);
				System.out.println("SCRIPT FLUSH every 20 ms (" + flushes + " flushes): " + decided.get()
						+ " decisions by 8 threads, 0 errors");
			}
			finally {
				factory.destroy();
			}
		}
	}

	@Test
	void redisKilledAndRestartedOnTheSamePortRecoversPromptlyWithBoundedReplay() throws Exception {
		RedisProcess redis = RedisProcess.start();
		int port = redis.port();
		LettuceConnectionFactory factory = factory(port);
		int threads = 8;
		Duration open = Duration.ofMillis(300);
		GuardedBackend guarded = GuardedBackend.builder(SpringDataRedisScriptExecutor.backend(factory, Runnable::run).build())
			.deadline(Duration.ofMillis(50))
			.maxDeadline(Duration.ofMillis(300))
			.openDuration(open)
			.failurePolicy(requests -> FailurePolicy.OPEN)
			.build();
		guarded.delegate().decide(List.of(LimitRequest.of(this.limit, "warm-up")), Operation.CHECK);
		AtomicBoolean running = new AtomicBoolean(true);
		AtomicInteger errors = new AtomicInteger();
		AtomicInteger admittedByRedisAfterRestart = new AtomicInteger();
		AtomicBoolean restarted = new AtomicBoolean();
		ExecutorService pool = Executors.newFixedThreadPool(threads);
		List<Future<?>> load = new ArrayList<>();
		for (int t = 0; t < threads; t++) {
			load.add(pool.submit(() -> {
				while (running.get()) {
					try {
						boolean afterRestart = restarted.get();
						Decision decision = guarded.decide(List.of(LimitRequest.of(this.limit, "k")), Operation.ACQUIRE);
						if (afterRestart && decision.origin() == Decision.Origin.BACKEND && decision.allowed()) {
							admittedByRedisAfterRestart.incrementAndGet();
						}
					}
					catch (RuntimeException ex) {
						errors.incrementAndGet();
					}
					Thread.sleep(1);
				}
				return null;
			}));
		}
		try {
			Thread.sleep(300);
			redis.close();
			Thread.sleep(1500);
			long outageEnd = System.nanoTime();
			restarted.set(true);
			redis = RedisProcess.start(port);
			long recovered = 0;
			long deadline = System.nanoTime() + Duration.ofSeconds(15).toNanos();
			while (System.nanoTime() < deadline) {
				Decision probe = guarded.decide(List.of(LimitRequest.of(this.limit, "probe")), Operation.CHECK);
				if (probe.origin() == Decision.Origin.BACKEND) {
					recovered = (System.nanoTime() - outageEnd) / 1_000_000;
					break;
				}
				Thread.sleep(50);
			}
			assertThat(recovered).as("decisions come from Redis again").isPositive();
			Thread.sleep(500);
			running.set(false);
			for (Future<?> future : load) {
				future.get();
			}
			pool.shutdown();
			Decision state = guarded.delegate().decide(List.of(LimitRequest.of(this.limit, "k")), Operation.CHECK);
			long consumed = this.limit.capacity() - state.remaining() - 1;
			long replayed = consumed - admittedByRedisAfterRestart.get();
			assertThat(errors.get()).as("errors reaching callers").isZero();
			// Commands sent to the dead Redis and replayed on the new one: the batches the connection's lane has in
			// flight hold at most one call per thread together; the calls that waited behind them gave up (their
			// deadline) and are never sent. Twice that, since a lane leaving the map may briefly let more batches out.
			long bound = 2L * threads;
			assertThat(replayed).as("permits consumed that no caller was told about").isBetween(0L, bound);
			System.out.println("Redis killed for 1.5 s and restarted on port " + port + ": Redis decides again "
					+ recovered + " ms after the restart began; " + replayed + " buffered decisions replayed (bound "
					+ bound + "); 0 errors");
		}
		finally {
			running.set(false);
			pool.shutdownNow();
			factory.destroy();
			redis.close();
		}
	}

	private static LettuceConnectionFactory factory(int port) {
		LettuceConnectionFactory factory = new LettuceConnectionFactory(new RedisStandaloneConfiguration("127.0.0.1", port));
		factory.afterPropertiesSet();
		factory.start();
		return factory;
	}

}
