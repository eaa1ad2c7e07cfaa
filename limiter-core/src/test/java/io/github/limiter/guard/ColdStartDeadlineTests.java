package io.github.limiter.guard;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import org.junit.jupiter.api.Test;

import io.github.limiter.Decision;
import io.github.limiter.LimitRequest;
import io.github.limiter.Operation;
import io.github.limiter.algorithm.FixedWindow;
import io.github.limiter.testsupport.StubBackend;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The first decision of a JVM runs code and loads scripts that nothing ran before: it may take up to the max deadline,
 * even when a heartbeat has already found the backend quick to answer a probe. Neither it nor a probe answered after
 * its own timeout (a stall) teaches the deadline the latency to come.
 */
class ColdStartDeadlineTests {

	private static final FixedWindow LIMIT = FixedWindow.of("first", 10, Duration.ofMinutes(1));

	/** Answers probes at once, and the first other decision after 300 ms (a cold script), later ones at once. */
	static final class ColdBackend extends StubBackend {

		ColdBackend(AtomicBoolean cold) {
			super(requests -> {
				Decision decision = Decision.of(requests.get(0).limit().name(), true, 10, 9, 0, 0, 0, 0, null);
				if (requests.get(0).limit().name().equals(LIMIT.name()) && cold.getAndSet(false)) {
					return CompletableFuture.supplyAsync(() -> decision,
							CompletableFuture.delayedExecutor(300, TimeUnit.MILLISECONDS));
				}
				return CompletableFuture.completedFuture(decision);
			});
		}

	}

	@Test
	void aColdFirstDecisionLeavesTheDeadlineAtItsFloor() throws Exception {
		GuardedBackend guarded = GuardedBackend.builder(new ColdBackend(new AtomicBoolean(true)))
			.deadline(Duration.ofMillis(50))
			.maxDeadline(Duration.ofSeconds(5))
			.build();
		try {
			Decision first = guarded.decide(List.of(LimitRequest.of(LIMIT, "k")), Operation.ACQUIRE);
			assertThat(first.origin()).isEqualTo(Decision.Origin.BACKEND);
			guarded.decide(List.of(LimitRequest.of(LIMIT, "k")), Operation.ACQUIRE);
			// Learnt from, the cold 300 ms would have set the deadline to 900 ms for ten seconds.
			assertThat(guarded.stats().deadline()).isEqualTo(Duration.ofMillis(50));
		}
		finally {
			guarded.close();
		}
	}

	@Test
	void aSlowBackendIsLearntFromItsFirstWarmAnswerNotFromRejections() throws Exception {
		// Every decision takes 200 ms: the cold first one is not learnt from, so the second may take maxDeadline too.
		StubBackend slow = new StubBackend(requests -> CompletableFuture.supplyAsync(
				() -> Decision.of(requests.get(0).limit().name(), true, 10, 9, 0, 0, 0, 0, null),
				CompletableFuture.delayedExecutor(200, TimeUnit.MILLISECONDS))) {
		};
		GuardedBackend guarded = GuardedBackend.builder(slow)
			.deadline(Duration.ofMillis(50))
			.maxDeadline(Duration.ofSeconds(5))
			.build();
		try {
			for (int i = 0; i < 3; i++) {
				assertThat(guarded.decide(List.of(LimitRequest.of(LIMIT, "k")), Operation.ACQUIRE).origin())
					.as("decision %d", i)
					.isEqualTo(Decision.Origin.BACKEND);
			}
			assertThat(guarded.stats().deadline()).as("three times the warm answers' 200 ms")
				.isGreaterThanOrEqualTo(Duration.ofMillis(600));
		}
		finally {
			guarded.close();
		}
	}

	@Test
	void aProbeAnsweredAfterItsTimeoutLeavesTheDeadlineAtItsFloor() throws Exception {
		AtomicBoolean stalled = new AtomicBoolean();
		CompletableFuture<Void> lateAnswer = new CompletableFuture<>();
		StubBackend backend = new StubBackend(requests -> {
			Decision decision = Decision.of(requests.get(0).limit().name(), true, 10, 9, 0, 0, 0, 0, null);
			if (!requests.get(0).limit().name().equals(LIMIT.name()) && stalled.getAndSet(false)) {
				// One probe is answered 900 ms late, as by a backend frozen for that long.
				return CompletableFuture.supplyAsync(() -> decision,
						CompletableFuture.delayedExecutor(900, TimeUnit.MILLISECONDS))
					.whenComplete((answer, failure) -> lateAnswer.complete(null));
			}
			return CompletableFuture.completedFuture(decision);
		}) {
		};
		GuardedBackend guarded = GuardedBackend.builder(backend)
			.deadline(Duration.ofMillis(50))
			.maxDeadline(Duration.ofMillis(300))
			.heartbeat(Duration.ofMillis(50))
			.build();
		try {
			guarded.decide(List.of(LimitRequest.of(LIMIT, "k")), Operation.ACQUIRE);
			stalled.set(true);
			lateAnswer.get(10, TimeUnit.SECONDS);
			Thread.sleep(100);
			// Learnt from, the 900 ms would have held the deadline at its 300 ms ceiling for ten seconds.
			assertThat(guarded.stats().deadline()).isEqualTo(Duration.ofMillis(50));
			assertThat(guarded.breaker().state()).isEqualTo(CircuitBreaker.State.CLOSED);
		}
		finally {
			guarded.close();
		}
	}

	@Test
	void theFirstDecisionMayTakeTheMaxDeadlineAfterAHeartbeatAnswered() throws Exception {
		ColdBackend backend = new ColdBackend(new AtomicBoolean(true));
		GuardedBackend guarded = GuardedBackend.builder(backend)
			.deadline(Duration.ofMillis(50))
			.maxDeadline(Duration.ofSeconds(5))
			.heartbeat(Duration.ofMillis(20))
			.build();
		try {
			// The heartbeat probes at once and is answered at once: the backend is known to be quick.
			Thread.sleep(200);
			Decision first = guarded.decide(List.of(LimitRequest.of(LIMIT, "k")), Operation.ACQUIRE);
			assertThat(first.origin()).as("decided by the backend, not timed out after the 50 ms floor")
				.isEqualTo(Decision.Origin.BACKEND);
			assertThat(first.allowed()).isTrue();
		}
		finally {
			guarded.close();
		}
	}

}
