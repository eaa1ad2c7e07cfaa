package io.github.limiter;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import org.junit.jupiter.api.Test;

import io.github.limiter.algorithm.SlidingWindowLog;
import io.github.limiter.backend.local.LocalBackend;
import io.github.limiter.event.RateLimiterListener;
import io.github.limiter.spi.BackendException;
import io.github.limiter.spi.RateLimiterBackend;
import io.github.limiter.testsupport.StubBackend;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

class RateLimiterTests {

	/** Without boundaries: the local backend decides on the real clock, where a fixed window starts afresh each minute. */
	private final Limit limit = SlidingWindowLog.of("listened", 1, Duration.ofMinutes(1));

	@Test
	void listenersSeeEveryDecision() {
		List<String> seen = new ArrayList<>();
		RateLimiter limiter = RateLimiter.of(LocalBackend.create()).withListener(recording(seen));
		limiter.acquire(this.limit, "a");
		limiter.acquire(this.limit, "a");
		limiter.check(this.limit, "b");
		limiter.decideAsync(List.of(LimitRequest.of(this.limit, "c")), Operation.RECORD).toCompletableFuture().join();
		assertThat(seen).containsExactly("ACQUIRE a true", "ACQUIRE a false", "CHECK b true", "RECORD c true");
	}

	@Test
	void aFailurePolicysRefusalOfAQueueingLimitIsWaitedForWithinMaxWait() throws InterruptedException {
		// The policy's retry time says when to ask again, not where a queue ends: it is waited for when it fits.
		java.util.concurrent.atomic.AtomicInteger asked = new java.util.concurrent.atomic.AtomicInteger();
		Limit queue = io.github.limiter.algorithm.LeakyBucket.queueing("queue", 10, Duration.ofSeconds(1), 1);
		RateLimiter limiter = RateLimiter.of(new io.github.limiter.testsupport.StubBackend(requests -> {
			boolean first = asked.incrementAndGet() == 1;
			Decision decision = first
					? Decision.of("queue", false, 2, 0, 300_000, 300_000, 0, 0, null)
						.withOrigin(Decision.Origin.FAIL_CLOSED)
					: Decision.of("queue", true, 2, 1, 0, 100_000, 0, 0, null);
			return java.util.concurrent.CompletableFuture.completedFuture(decision);
		}) {
		});
		Decision decision = limiter.acquire(List.of(LimitRequest.of(queue, "k")), Duration.ofSeconds(1));
		assertThat(decision.allowed()).isTrue();
		assertThat(asked.get()).isEqualTo(2);
	}

	@Test
	void tryAcquireIsSeenByListenersAsTheAcquireItIs() {
		List<String> seen = new ArrayList<>();
		RateLimiter limiter = RateLimiter.of(LocalBackend.create()).withListener(recording(seen));
		assertThat(limiter.tryAcquire(this.limit, "a")).isTrue();
		assertThat(limiter.tryAcquire(this.limit, "a")).isFalse();
		assertThat(seen).containsExactly("ACQUIRE a true", "ACQUIRE a false");
	}

	/**
	 * A caller that stops waiting for a permit (cancels the wait) takes none: the limiter asks nothing more, so the
	 * permit of the next window is left for whoever comes then.
	 */
	@Test
	void aWaitCancelledBeforeThePermitCameTakesNothing() throws InterruptedException {
		RateLimiter limiter = RateLimiter.of(LocalBackend.create());
		io.github.limiter.algorithm.TokenBucket bucket = io.github.limiter.algorithm.TokenBucket.of("waited", 1,
				Duration.ofSeconds(2));
		long start = System.nanoTime();
		assertThat(limiter.acquire(bucket, "k").allowed()).isTrue();
		CompletableFuture<Decision> waiting = limiter
			.acquireAsync(List.of(LimitRequest.of(bucket, "k")), Duration.ofSeconds(5))
			.toCompletableFuture();
		assertThat(waiting).isNotDone();
		waiting.cancel(false);
		Thread.sleep(Math.max(0, 2_500 - (System.nanoTime() - start) / 1_000_000));
		assertThat(limiter.acquire(bucket, "k").allowed()).as("the permit that came at 2 s").isTrue();
	}

	/** A listener that writes down each decision as "operation key allowed". */
	private static RateLimiterListener recording(List<String> seen) {
		return new RateLimiterListener() {
			@Override
			public void onDecision(List<LimitRequest> requests, Operation operation, Decision decision, long nanos) {
				seen.add(operation + " " + requests.get(0).key() + " " + decision.allowed());
			}
		};
	}

	@Test
	void tryAcquireRejectsABadRequestLikeAcquire() {
		RateLimiter limiter = RateLimiter.of(LocalBackend.create());
		assertThatExceptionOfType(IllegalArgumentException.class).isThrownBy(() -> limiter.tryAcquire(this.limit, "a", 2))
			.withMessageContaining("cost 2 exceeds the capacity 1 of limit 'listened'");
		assertThatExceptionOfType(NullPointerException.class).isThrownBy(() -> limiter.tryAcquire(this.limit, null))
			.withMessage("key must not be null");
	}

	/**
	 * A listener that fails on every decision (its sink is down) writes one warning, not one per decision; and cannot
	 * hide another that fails too.
	 */
	@Test
	void aListenerThatFailsOnEveryDecisionIsLoggedOnceWithItsReason() {
		RateLimiter limiter = RateLimiter.of(LocalBackend.create())
			.withListener(failing(new IllegalStateException("metrics sink down")))
			.withListener(failing(new IllegalArgumentException("audit bug")));
		try (io.github.limiter.testsupport.LoggedWarnings warnings = io.github.limiter.testsupport.LoggedWarnings
			.of(RateLimiter.class)) {
			for (int i = 0; i < 200; i++) {
				assertThat(limiter.tryAcquire(this.limit, "user-" + i)).isTrue();
			}
			assertThat(warnings.messages()).hasSize(2)
				.anySatisfy(message -> assertThat(message).contains("failed: IllegalStateException: metrics sink down"))
				.anySatisfy(message -> assertThat(message).contains("failed: IllegalArgumentException: audit bug"));
		}
	}

	private static RateLimiterListener failing(RuntimeException failure) {
		return new RateLimiterListener() {
			@Override
			public void onDecision(List<io.github.limiter.LimitRequest> requests, Operation operation, Decision decision,
					long nanos) {
				throw failure;
			}
		};
	}

	@Test
	void listenersSeeBackendFailuresAndAFailingListenerChangesNothing() {
		RateLimiterBackend broken = StubBackend.failingWith(new BackendException("down", null));
		List<Throwable> failures = new ArrayList<>();
		RateLimiter limiter = RateLimiter.of(broken).withListener(new RateLimiterListener() {
			@Override
			public void onError(List<LimitRequest> requests, Operation operation, Throwable failure, long nanos) {
				throw new IllegalStateException("listener bug");
			}
		}).withListener(new RateLimiterListener() {
			@Override
			public void onError(List<LimitRequest> requests, Operation operation, Throwable failure, long nanos) {
				failures.add(failure);
			}
		});
		assertThatExceptionOfType(BackendException.class).isThrownBy(() -> limiter.acquire(this.limit, "a"))
			.withMessage("down");
		assertThat(failures).hasSize(1);
	}

}
