package io.github.limiter.guard;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import org.junit.jupiter.api.Test;

import io.github.limiter.Decision;
import io.github.limiter.Limit;
import io.github.limiter.LimitRequest;
import io.github.limiter.Operation;
import io.github.limiter.algorithm.FixedWindow;
import io.github.limiter.backend.local.LocalBackend;
import io.github.limiter.spi.BackendException;
import io.github.limiter.testsupport.LoggedWarnings;
import io.github.limiter.testsupport.StubBackend;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A backend that answers a key's decisions with an error while it answers everything else (a script refused on a key
 * that holds another kind of data) is not down, and not slow either: the warning says which.
 */
class ErrorIsNotSlownessTests {

	private final Limit limit = FixedWindow.of("orders", 10, Duration.ofMinutes(1));

	@Test
	void decisionsThatGotAnErrorAreNotTakenForSlowness() throws Exception {
		LocalBackend local = LocalBackend.create();
		StubBackend store = new StubBackend(requests -> requests.get(0).key().equals("broken")
				? CompletableFuture.failedFuture(new BackendException("Redis could not decide script over [broken]",
						new IllegalStateException("WRONGTYPE Operation against a key holding the wrong kind of value")))
				: local.decideAsync(requests, Operation.CHECK)) {
		};
		List<String> warnings;
		try (LoggedWarnings logged = LoggedWarnings.of(GuardedBackend.class);
				GuardedBackend guard = GuardedBackend.builder(store).build()) {
			Decision answered = guard.decideAsync(List.of(LimitRequest.of(this.limit, "broken")), Operation.ACQUIRE)
				.toCompletableFuture()
				.join();
			assertThat(answered.origin()).isNotEqualTo(Decision.Origin.BACKEND);
			long giveUp = System.nanoTime() + Duration.ofSeconds(10).toNanos();
			while (logged.messages().isEmpty() && System.nanoTime() < giveUp) {
				Thread.sleep(10);
			}
			warnings = logged.messages();
		}
		assertThat(warnings).hasSize(1);
		assertThat(warnings.get(0)).contains("could not decide script over [broken]")
			.contains("so it is not down: the last failure is an error, not slowness")
			.doesNotContain("a slow backend or a busy JVM");
	}

}
