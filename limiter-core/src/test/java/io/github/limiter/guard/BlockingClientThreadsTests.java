package io.github.limiter.guard;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

import io.github.limiter.Decision;
import io.github.limiter.Limit;
import io.github.limiter.LimitRequest;
import io.github.limiter.Operation;
import io.github.limiter.algorithm.FixedWindow;
import io.github.limiter.spi.BlockingCalls;
import io.github.limiter.testsupport.StubBackend;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A blocking client (Jedis) on a frozen Redis holds a bounded number of threads, however many calls come: each call is
 * answered by the failure policy within its deadline, and the calls beyond the threads wait for one or are refused.
 */
class BlockingClientThreadsTests {

	private final Limit limit = FixedWindow.of("frozen", 10, Duration.ofMinutes(1));

	@Test
	void aFrozenBlockingClientHoldsABoundedNumberOfThreads() throws Exception {
		CountDownLatch thaw = new CountDownLatch(1);
		StubBackend frozen = new StubBackend(requests -> {
			try {
				thaw.await(30, TimeUnit.SECONDS);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
			return CompletableFuture.failedFuture(new IllegalStateException("thawed"));
		}) {

			@Override
			public boolean blocksCaller() {
				return true;
			}

		};
		try (GuardedBackend guard = GuardedBackend.builder(frozen).failurePolicy(requests -> FailurePolicy.OPEN).build()) {
			List<CompletableFuture<Decision>> calls = new ArrayList<>();
			for (int i = 0; i < 3 * BlockingCalls.THREADS; i++) {
				calls.add(guard.decideAsync(List.of(LimitRequest.of(this.limit, "k" + i)), Operation.ACQUIRE)
					.toCompletableFuture());
			}
			for (CompletableFuture<Decision> call : calls) {
				assertThat(call.get(30, TimeUnit.SECONDS).origin()).isEqualTo(Decision.Origin.FAIL_OPEN);
			}
			long blocked = Thread.getAllStackTraces().keySet().stream()
				.filter(thread -> thread.getName().equals("limiter-blocking-call"))
				.count();
			assertThat(blocked).isLessThanOrEqualTo(BlockingCalls.THREADS);
		}
		finally {
			thaw.countDown();
		}
	}

}
