package io.github.limiter.backend.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.api.Test;

import io.github.limiter.Decision;
import io.github.limiter.LimitRequest;
import io.github.limiter.Operation;
import io.github.limiter.algorithm.TokenBucket;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The caller's deadline and Redis's admission racing, 20,000 times on two threads: whichever wins, an admission the
 * caller did not receive is given back, exactly once, and one it received is not.
 */
class DeadlineRacingAnswerTests {

	@Test
	void anAdmissionThatLosesTheRaceToTheDeadlineIsGivenBackWithTheDenialCache() throws Exception {
		assertThat(lostRefunds(RedisScriptBackend.DEFAULT_DENIAL_CACHE_SIZE)).as("admissions kept unreceived or given back received").isZero();
	}

	@Test
	void anAdmissionThatLosesTheRaceToTheDeadlineIsGivenBackWithoutTheDenialCache() throws Exception {
		assertThat(lostRefunds(0)).as("admissions kept unreceived or given back received").isZero();
	}

	/**
	 * Races 20,000 rounds, each on a key of its own, and answers how many admissions went wrong: kept though nobody
	 * received them, or given back though their caller received them. A refund may be sent by another thread after
	 * its round (the lane's pump, once the caller gave up), so refunds are counted per key and checked at the end.
	 */
	private int lostRefunds(int cacheSize) throws Exception {
		AtomicReference<CompletableFuture<List<Object>>> pending = new AtomicReference<>();
		Map<String, AtomicInteger> refunds = new ConcurrentHashMap<>();
		RedisScriptExecutor fake = new RedisScriptExecutor() {
			@Override
			public CompletionStage<List<Object>> execute(LimiterScript script, List<String> keys, List<String> args) {
				if (args.stream().anyMatch(a -> a.startsWith("f"))) {
					refunds.computeIfAbsent(keys.get(0), key -> new AtomicInteger()).incrementAndGet();
					return CompletableFuture.completedFuture(List.of("1 1 0 0 0 0"));
				}
				CompletableFuture<List<Object>> reply = new CompletableFuture<>();
				pending.set(reply);
				return reply;
			}

			@Override
			public boolean isCluster() {
				return false;
			}
		};
		RedisScriptBackend backend = RedisScriptBackend.builder(fake).keyPrefix("race:").denialCacheSize(cacheSize).build();
		KeyLayout layout = new KeyLayout("race:");
		TokenBucket limit = TokenBucket.of("race", 1000, Duration.ofSeconds(1));
		ExecutorService threads = Executors.newFixedThreadPool(2);
		List<String> received = new ArrayList<>();
		List<String> timedOut = new ArrayList<>();
		try {
			for (int i = 0; i < 20_000; i++) {
				pending.set(null);
				LimitRequest request = LimitRequest.of(limit, "k" + i);
				CompletableFuture<Decision> answered = backend.decideAsync(List.of(request), Operation.ACQUIRE)
					.toCompletableFuture();
				// Sent by this thread, or by the lane's pump after the previous round's caller gave up.
				CompletableFuture<List<Object>> reply;
				while ((reply = pending.get()) == null) {
					Thread.onSpinWait();
				}
				CompletableFuture<List<Object>> sent = reply;
				CyclicBarrier start = new CyclicBarrier(2);
				Future<?> a = threads.submit(() -> {
					start.await();
					sent.complete(List.of("1000000 1 5 0 1000 0"));
					return null;
				});
				Future<?> b = threads.submit(() -> {
					start.await();
					answered.completeExceptionally(new TimeoutException("deadline"));
					return null;
				});
				a.get();
				b.get();
				String key = layout.key(request);
				(answered.isCompletedExceptionally() ? timedOut : received).add(key);
			}
		}
		finally {
			threads.shutdownNow();
		}
		assertThat(timedOut).as("races the deadline won").isNotEmpty();
		long end = System.nanoTime() + 10_000_000_000L;
		while (timedOut.stream().anyMatch(key -> !refunds.containsKey(key)) && System.nanoTime() < end) {
			Thread.sleep(10);
		}
		int wrong = 0;
		for (String key : timedOut) {
			wrong += (refunds.getOrDefault(key, new AtomicInteger()).get() == 1) ? 0 : 1;
		}
		for (String key : received) {
			wrong += refunds.containsKey(key) ? 1 : 0;
		}
		return wrong;
	}

}
