package io.github.limiter.spring.interceptor;

import java.time.Duration;
import java.util.concurrent.CancellationException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import io.github.limiter.Limit;
import io.github.limiter.RateLimiter;
import io.github.limiter.algorithm.Algorithm;
import io.github.limiter.spring.annotation.RateLimit;
import io.github.limiter.spring.autoconfigure.RateLimiterAutoConfiguration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A thread interrupted while its call waits for a permit ({@code maxWait}) or for its turn in a queueing leaky bucket
 * stops waiting: the method is not called, what the call took goes back, and the caller learns of the interruption
 * (the {@link InterruptedException} when the method declares it).
 */
class InterruptedWaitTests {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(RateLimiterAutoConfiguration.class))
		.withBean(Waiting.class)
		.withPropertyValues("limiter.backend=local");

	static class Waiting {

		final AtomicInteger ran = new AtomicInteger();

		@RateLimit(name = "queue", max = "1", window = "2s", algorithm = Algorithm.LEAKY_BUCKET, burst = "5")
		public void queued() {
			this.ran.incrementAndGet();
		}

		@RateLimit(name = "permit", max = "1", window = "3s", maxWait = "5s")
		public void patient() {
			this.ran.incrementAndGet();
		}

		@RateLimit(name = "declaring", max = "1", window = "3s", maxWait = "5s")
		public void declaring() throws InterruptedException {
			this.ran.incrementAndGet();
		}

		@RateLimit(name = "staged", max = "1", window = "3s", maxWait = "5s")
		public java.util.concurrent.CompletableFuture<String> staged() {
			this.ran.incrementAndGet();
			return java.util.concurrent.CompletableFuture.completedFuture("done");
		}

		int ran() {
			return this.ran.get();
		}

	}

	/** How a call on a thread of its own ended: what it threw, and whether the thread was left interrupted. */
	private record Ended(Throwable thrown, boolean interrupted) {

	}

	/**
	 * Runs the call on a thread of its own, interrupted before the call or once it waits, and waits for its end.
	 * @param call the call
	 * @param before whether the thread is interrupted before the call (else once the call waits)
	 */
	private static Ended onInterruptedThread(Runnable call, boolean before) throws InterruptedException {
		AtomicReference<Ended> ended = new AtomicReference<>();
		Thread thread = new Thread(() -> {
			if (before) {
				Thread.currentThread().interrupt();
			}
			Throwable thrown = null;
			try {
				call.run();
			}
			catch (Throwable ex) {
				thrown = ex;
			}
			ended.set(new Ended(thrown, Thread.currentThread().isInterrupted()));
		});
		thread.start();
		if (!before) {
			// Until the thread waits (a wait of seconds), then interrupted.
			long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
			while (thread.getState() != Thread.State.TIMED_WAITING && thread.getState() != Thread.State.WAITING
					&& System.nanoTime() < deadline) {
				Thread.sleep(5);
			}
			thread.interrupt();
		}
		thread.join(Duration.ofSeconds(30).toMillis());
		assertThat(thread.isAlive()).as("the call ends").isFalse();
		return ended.get();
	}

	/** Runs the call on a thread of its own, interrupts it once it waits, and returns what the call threw. */
	private static Throwable interruptedWhileWaiting(Runnable call) throws InterruptedException {
		Ended ended = onInterruptedThread(call, false);
		if (ended.thrown() instanceof CancellationException) {
			assertThat(ended.interrupted()).as("the interrupt status, set again").isTrue();
		}
		return ended.thrown();
	}

	private static Limit limit(RateLimitOperationSource source, String name) {
		return source.rateLimitedMethods()
			.stream()
			.flatMap(method -> method.operations().stream())
			.map(RateLimitOperation::limit)
			.filter(limit -> limit.name().equals(name))
			.findFirst()
			.orElseThrow();
	}

	@Test
	void aCallInterruptedWhileItWaitsItsTurnGivesItsPlaceInTheQueueBack() {
		this.runner.run(context -> {
			Waiting waiting = context.getBean(Waiting.class);
			waiting.queued();
			Throwable thrown = interruptedWhileWaiting(waiting::queued);
			assertThat(thrown).isInstanceOf(CancellationException.class)
				.hasMessage("Interrupted while Waiting.queued waited for its permit or its turn; it was not called, and "
						+ "what it took was given back")
				.hasCauseInstanceOf(InterruptedException.class);
			assertThat(waiting.ran()).isEqualTo(1);
			// The queue holds the first call's slice only, not the interrupted one's too: a check, which answers as if
			// it took a place, finds the queue full again within about 4 s, not 6.
			Limit queue = limit(context.getBean(RateLimitOperationSource.class), "queue");
			assertThat(context.getBean(RateLimiter.class).check(queue, "").resetAfter())
				.isLessThan(Duration.ofSeconds(5));
		});
	}

	@Test
	void aStageCancelledWhileItWaitsForAPermitIsNotMadeAndTakesNothing() throws Exception {
		this.runner.run(context -> {
			Waiting waiting = context.getBean(Waiting.class);
			assertThat(waiting.staged().get()).isEqualTo("done");
			java.util.concurrent.CompletableFuture<String> gone = waiting.staged();
			Thread.sleep(100);
			assertThat(gone.cancel(true)).isTrue();
			// Past the time its permit would have come: the method was not called for a caller that left.
			Thread.sleep(3500);
			assertThat(waiting.ran()).isEqualTo(1);
			assertThat(waiting.staged().get(30, java.util.concurrent.TimeUnit.SECONDS)).isEqualTo("done");
			assertThat(waiting.ran()).isEqualTo(2);
		});
	}

	@Test
	void aThreadInterruptedBeforeTheCallIsDecidedAsAnyOtherOnABackendThatAnswersLater() throws InterruptedException {
		this.runner.withBean(RateLimiter.class, () -> RateLimiter.of(new CancelledBeforeItsDecisionTests.Slow()))
			.run(context -> {
				Waiting waiting = context.getBean(Waiting.class);
				Ended ended = onInterruptedThread(waiting::patient, true);
				assertThat(ended.thrown()).isNull();
				assertThat(waiting.ran()).as("a free permit, on a thread interrupted by code unrelated to the limit")
					.isEqualTo(1);
				assertThat(ended.interrupted()).as("its interrupt status left as it was").isTrue();
			});
	}

	@Test
	void aCallInterruptedWhileItWaitsForAPermitIsNotMade() {
		this.runner.run(context -> {
			Waiting waiting = context.getBean(Waiting.class);
			waiting.patient();
			assertThat(interruptedWhileWaiting(waiting::patient)).isInstanceOf(CancellationException.class);
			waiting.declaring();
			assertThat(interruptedWhileWaiting(() -> {
				try {
					waiting.declaring();
				}
				catch (InterruptedException ex) {
					throw new IllegalStateException(ex);
				}
			})).hasCauseInstanceOf(InterruptedException.class).isInstanceOf(IllegalStateException.class);
			assertThat(waiting.ran()).isEqualTo(2);
		});
	}

}
