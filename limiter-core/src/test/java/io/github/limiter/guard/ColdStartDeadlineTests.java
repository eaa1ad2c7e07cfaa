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
 * even when a heartbeat has already found the backend quick to answer a probe.
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
