package io.github.limiter.guard;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;

import io.github.limiter.Decision;
import io.github.limiter.Limit;
import io.github.limiter.LimitRequest;
import io.github.limiter.Operation;
import io.github.limiter.RateLimiter;
import io.github.limiter.algorithm.FixedWindow;
import io.github.limiter.backend.local.LocalBackend;
import io.github.limiter.event.RateLimiterListener;
import io.github.limiter.spi.LateAdmissions;
import io.github.limiter.spi.RateLimiterBackend;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The SPI's promise, kept by what wraps a backend too: a caller that stops waiting may complete the future it holds,
 * and an admission made for it afterwards is given back.
 */
class CallerGivesUpTests {

	private final Limit limit = FixedWindow.of("given-up", 1, Duration.ofMinutes(1));

	private final Slow slow = new Slow();

	@Test
	void aCallerThatStopsWaitingForTheGuardGetsItsAdmissionGivenBack() throws Exception {
		try (GuardedBackend guard = GuardedBackend.builder(this.slow)
			.deadline(Duration.ofSeconds(1))
			.maxDeadline(Duration.ofSeconds(2))
			.build()) {
			guard.decideAsync(List.of(LimitRequest.of(this.limit, "k")), Operation.ACQUIRE).toCompletableFuture()
				.cancel(false);
			awaitRefunds(1);
		}
	}

	@Test
	void aCallerThatStopsWaitingForTheLimiterGetsItsAdmissionGivenBack() throws Exception {
		RateLimiter limiter = RateLimiter.of(this.slow).withListener(new RateLimiterListener() {
		});
		limiter.decideAsync(List.of(LimitRequest.of(this.limit, "k")), Operation.ACQUIRE).toCompletableFuture()
			.cancel(false);
		awaitRefunds(1);
	}

	private void awaitRefunds(int expected) throws InterruptedException {
		long end = System.nanoTime() + Duration.ofSeconds(10).toNanos();
		while (this.slow.refunds.get() < expected && System.nanoTime() < end) {
			Thread.sleep(10);
		}
		assertThat(this.slow.refunds.get()).as("the admission nobody received, given back").isEqualTo(expected);
		Thread.sleep(300);
		assertThat(this.slow.refunds.get()).as("once").isEqualTo(expected);
	}

	/** Decides at once, answers 200 ms later, and keeps the SPI's promise itself (LateAdmissions). */
	private static final class Slow implements RateLimiterBackend {

		final AtomicInteger refunds = new AtomicInteger();

		private final LocalBackend local = LocalBackend.create();

		private final LateAdmissions late = new LateAdmissions(Slow.class, this::refundAsync);

		@Override
		public CompletionStage<Decision> decideAsync(List<LimitRequest> requests, Operation operation) {
			Decision decision = this.local.decide(requests, operation);
			CompletableFuture<Decision> answer = new CompletableFuture<>();
			CompletableFuture.delayedExecutor(200, TimeUnit.MILLISECONDS)
				.execute(() -> this.late.deliver(answer, requests, operation, decision, null));
			return answer;
		}

		@Override
		public CompletionStage<Void> resetAsync(Limit limit, String key) {
			return this.local.resetAsync(limit, key);
		}

		@Override
		public CompletionStage<Void> refundAsync(List<LimitRequest> requests, Decision acquired) {
			this.refunds.incrementAndGet();
			return this.local.refundAsync(requests, acquired);
		}

	}

}
