package io.github.limiter.backend.redis;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
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
		assertThat(lostRefunds(RedisScriptBackend.DEFAULT_DENIAL_CACHE_SIZE)).as("admissions nobody received, kept").isZero();
	}

	@Test
	void anAdmissionThatLosesTheRaceToTheDeadlineIsGivenBackWithoutTheDenialCache() throws Exception {
		assertThat(lostRefunds(0)).as("admissions nobody received, kept").isZero();
	}

	private int lostRefunds(int cacheSize) throws Exception {
		AtomicReference<CompletableFuture<List<Object>>> pending = new AtomicReference<>();
		AtomicInteger refunds = new AtomicInteger();
		RedisScriptExecutor fake = new RedisScriptExecutor() {
			@Override
			public CompletionStage<List<Object>> execute(LimiterScript script, List<String> keys, List<String> args) {
				if (args.stream().anyMatch(a -> a.startsWith("f"))) {
					refunds.incrementAndGet();
					return CompletableFuture.completedFuture(List.of(1L, 1L, 0L, 0L, 0L, 0L));
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
		RedisScriptBackend backend = RedisScriptBackend.builder(fake).denialCacheSize(cacheSize).build();
		LimitRequest request = LimitRequest.of(TokenBucket.of("race", 1000, Duration.ofSeconds(1)), "k");
		ExecutorService threads = Executors.newFixedThreadPool(2);
		int lost = 0;
		int timedOut = 0;
		try {
			for (int i = 0; i < 20_000; i++) {
				refunds.set(0);
				pending.set(null);
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
					sent.complete(List.of(1_000_000L, 1L, 5L, 0L, 1000L, 0L));
					return null;
				});
				Future<?> b = threads.submit(() -> {
					start.await();
					answered.completeExceptionally(new TimeoutException("deadline"));
					return null;
				});
				a.get();
				b.get();
				if (answered.isCompletedExceptionally()) {
					timedOut++;
					if (refunds.get() != 1) {
						lost++;
					}
				}
				else {
					assertThat(refunds.get()).as("refunds of an admission the caller received").isZero();
				}
			}
		}
		finally {
			threads.shutdownNow();
		}
		assertThat(timedOut).as("races the deadline won").isPositive();
		return lost;
	}

}
