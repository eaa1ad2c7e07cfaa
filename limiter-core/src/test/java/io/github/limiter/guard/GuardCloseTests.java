package io.github.limiter.guard;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;

import org.junit.jupiter.api.Test;

import io.github.limiter.Decision;
import io.github.limiter.spi.BackendException;
import io.github.limiter.testsupport.LoggedWarnings;
import io.github.limiter.testsupport.StubBackend;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A guard is closed before its backend's client is shut down (an application stopping): a probe in flight then fails,
 * and that is no outage.
 */
class GuardCloseTests {

	@Test
	void aProbeThatFailsAfterTheGuardClosedNeitherOpensTheCircuitNorWarns() throws InterruptedException {
		List<CompletableFuture<Decision>> sent = new CopyOnWriteArrayList<>();
		StubBackend unanswered = new StubBackend(requests -> {
			CompletableFuture<Decision> answer = new CompletableFuture<>();
			sent.add(answer);
			return answer;
		}) {
		};
		GuardedBackend guard = GuardedBackend.builder(unanswered).heartbeat(Duration.ofMillis(50)).build();
		long giveUp = System.nanoTime() + Duration.ofSeconds(30).toNanos();
		while (sent.isEmpty() && System.nanoTime() < giveUp) {
			Thread.sleep(10);
		}
		assertThat(sent).as("a probe in flight").isNotEmpty();
		try (LoggedWarnings warnings = LoggedWarnings.of(GuardedBackend.class)) {
			guard.close();
			sent.forEach(answer -> answer.completeExceptionally(new BackendException("client shut down", null)));
			Thread.sleep(200);
			assertThat(guard.breaker().state()).isEqualTo(CircuitBreaker.State.CLOSED);
			assertThat(warnings.messages()).isEmpty();
		}
	}

}
