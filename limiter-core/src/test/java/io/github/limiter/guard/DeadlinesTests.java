package io.github.limiter.guard;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BrokenBarrierException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import io.github.limiter.testsupport.LoggedWarnings;

import static io.github.limiter.testsupport.Threads.eventually;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The guard's deadlines: a call still pending at its deadline fails with a timeout, never before it; a call that
 * completes keeps its result; the checks run on the scheduler given while calls are in flight, and stop when none are.
 */
class DeadlinesTests {

	private static final long TICK = TimeUnit.MILLISECONDS.toNanos(1);

	private final ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor((runnable) -> {
		Thread thread = new Thread(runnable, "test-deadlines");
		thread.setDaemon(true);
		return thread;
	});

	private final ExecutorService expiry = Executors.newCachedThreadPool((runnable) -> {
		Thread thread = new Thread(runnable, "test-missed-deadline");
		thread.setDaemon(true);
		return thread;
	});

	@AfterEach
	void stopThreads() {
		this.scheduler.shutdownNow();
		this.expiry.shutdownNow();
	}

	@Test
	void aCallStillPendingAtItsDeadlineFailsWithATimeoutAndNotBefore() {
		Deadlines deadlines = new Deadlines(this.scheduler, this.expiry, TICK, 50);
		CompletableFuture<String> call = new CompletableFuture<>();
		AtomicLong failedAfter = new AtomicLong();
		AtomicReference<String> failedOn = new AtomicReference<>();
		long start = System.nanoTime();
		call.whenComplete((value, failure) -> {
			failedAfter.set(System.nanoTime() - start);
			failedOn.set(Thread.currentThread().getName());
		});
		assertThat(deadlines.within(call, TimeUnit.MILLISECONDS.toNanos(30))).isSameAs(call);

		eventually(() -> failedOn.get() != null);
		assertThatThrownBy(call::get).isInstanceOf(ExecutionException.class).hasCauseInstanceOf(TimeoutException.class);
		assertThat(failedAfter.get()).isGreaterThanOrEqualTo(TimeUnit.MILLISECONDS.toNanos(30));
		assertThat(failedOn.get()).as("failed on the expiry executor, not on the checks' thread")
			.isEqualTo("test-missed-deadline");
	}

	@Test
	void aCallWhoseFailureThrowsStopsNeitherTheOthersNorTheChecks() {
		Deadlines deadlines = new Deadlines(this.scheduler, this.expiry, TICK, 50);
		CompletableFuture<String> throwing = new CompletableFuture<>() {

			@Override
			public boolean completeExceptionally(Throwable failure) {
				throw new IllegalStateException("a future of a backend of someone's own");
			}

		};
		CompletableFuture<String> other = new CompletableFuture<>();
		try (LoggedWarnings warnings = LoggedWarnings.of(Deadlines.class)) {
			deadlines.within(throwing, TimeUnit.MILLISECONDS.toNanos(5));
			deadlines.within(other, TimeUnit.MILLISECONDS.toNanos(5));
			eventually(other::isCompletedExceptionally);
			eventually(() -> !warnings.messages().isEmpty());
			assertThat(warnings.messages().get(0)).contains("a future of a backend of someone's own");
		}

		CompletableFuture<String> later = new CompletableFuture<>();
		deadlines.within(later, TimeUnit.MILLISECONDS.toNanos(5));
		eventually(later::isCompletedExceptionally);
	}

	@Test
	void aCallThatCompletesInTimeKeepsItsResultAndTheChecksThenStop() throws Exception {
		Deadlines deadlines = new Deadlines(this.scheduler, this.expiry, TICK, 5);
		CompletableFuture<String> call = new CompletableFuture<>();
		deadlines.within(call, TimeUnit.SECONDS.toNanos(10));
		assertThat(deadlines.awake()).isTrue();
		call.complete("answered");

		// Dropped at the next tick, after which nothing is pending: the checks stop long before the deadline.
		eventually(() -> !deadlines.awake());
		assertThat(call.get()).isEqualTo("answered");
		assertThat(deadlines.starts()).isEqualTo(1);
	}

	@Test
	void aCallAlreadyDoneStartsNoChecks() {
		Deadlines deadlines = new Deadlines(this.scheduler, this.expiry, TICK, 5);
		CompletableFuture<String> done = CompletableFuture.completedFuture("answered");
		assertThat(deadlines.within(done, 1)).isSameAs(done);
		assertThat(deadlines.awake()).isFalse();
		assertThat(deadlines.starts()).isZero();
	}

	@Test
	void theNextCallAfterTheChecksStoppedStartsThemAgain() {
		Deadlines deadlines = new Deadlines(this.scheduler, this.expiry, TICK, 5);
		CompletableFuture<String> first = new CompletableFuture<>();
		deadlines.within(first, TimeUnit.MILLISECONDS.toNanos(5));
		eventually(() -> first.isDone() && !deadlines.awake());

		CompletableFuture<String> second = new CompletableFuture<>();
		deadlines.within(second, TimeUnit.MILLISECONDS.toNanos(5));
		assertThat(deadlines.starts()).isEqualTo(2);
		eventually(second::isCompletedExceptionally);
	}

	@Test
	void callsFromManyThreadsEachTimeOutOrKeepTheirResult() throws Exception {
		// The checks stop and start again while calls come: every call still pending fails, and only those.
		Deadlines deadlines = new Deadlines(this.scheduler, this.expiry, TICK, 2);
		int threads = 8;
		int callsEach = 2_000;
		List<List<CompletableFuture<Integer>>> calls = new ArrayList<>();
		CountDownLatch go = new CountDownLatch(1);
		// All callers pause together until the pending calls have failed and the checks have stopped.
		CyclicBarrier pause = new CyclicBarrier(threads, () -> eventually(() -> !deadlines.awake()));
		List<Thread> callers = new ArrayList<>();
		for (int t = 0; t < threads; t++) {
			List<CompletableFuture<Integer>> own = new ArrayList<>();
			calls.add(own);
			Thread caller = new Thread(() -> {
				try {
					go.await();
				}
				catch (InterruptedException ex) {
					return;
				}
				for (int i = 0; i < callsEach; i++) {
					CompletableFuture<Integer> call = new CompletableFuture<>();
					own.add(call);
					// Even calls are answered long before their deadline, odd ones never.
					deadlines.within(call, (i % 2 == 0) ? TimeUnit.SECONDS.toNanos(10) : TimeUnit.MILLISECONDS.toNanos(i % 7));
					if (i % 2 == 0) {
						call.complete(i);
					}
					if (i % 500 == 499) {
						try {
							pause.await();
						}
						catch (InterruptedException | BrokenBarrierException ex) {
							return;
						}
					}
				}
			});
			callers.add(caller);
			caller.start();
		}
		go.countDown();
		for (Thread caller : callers) {
			caller.join();
		}
		for (List<CompletableFuture<Integer>> own : calls) {
			assertThat(own).hasSize(callsEach);
			for (int i = 0; i < own.size(); i++) {
				CompletableFuture<Integer> call = own.get(i);
				eventually(call::isDone);
				if (i % 2 == 0) {
					assertThat(call.join()).isEqualTo(i);
				}
				else {
					assertThatThrownBy(call::join).hasCauseInstanceOf(TimeoutException.class);
				}
			}
		}
		// The checks start for each stretch between pauses, and more often if the callers were all held up for two ticks.
		assertThat(deadlines.starts()).isGreaterThanOrEqualTo(4);
		eventually(() -> !deadlines.awake());
	}

}
