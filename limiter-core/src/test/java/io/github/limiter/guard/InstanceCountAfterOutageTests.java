package io.github.limiter.guard;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;

import io.github.limiter.Decision;
import io.github.limiter.Limit;
import io.github.limiter.LimitRequest;
import io.github.limiter.Operation;
import io.github.limiter.backend.local.LocalBackend;
import io.github.limiter.spi.BackendException;
import io.github.limiter.spi.InstanceRegistry;
import io.github.limiter.spi.RateLimiterBackend;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A lower instance count seen just before an outage does not let the lone count right after it stand at once: the
 * first instance whose circuit closes after Redis lost the others' announcements counts itself alone, and an outage
 * soon after must not give it the whole of every limit (found by review: the stretch of lower counts survived the
 * outage).
 */
class InstanceCountAfterOutageTests {

	/** count > 0: answered; -1: connection refused. */
	private final AtomicInteger next = new AtomicInteger(3);

	private final LocalBackend local = LocalBackend.create();

	class Registry implements RateLimiterBackend, InstanceRegistry {

		@Override
		public CompletionStage<Decision> decideAsync(List<LimitRequest> requests, Operation operation) {
			return local.decideAsync(requests, operation);
		}

		@Override
		public CompletionStage<Void> refundAsync(List<LimitRequest> requests, Decision acquired) {
			return local.refundAsync(requests, acquired);
		}

		@Override
		public CompletionStage<Void> resetAsync(Limit limit, String key) {
			return local.resetAsync(limit, key);
		}

		@Override
		public CompletionStage<Integer> announce(String instance, Duration ttl) {
			int n = next.get();
			return (n > 0) ? CompletableFuture.completedFuture(n)
					: CompletableFuture.failedFuture(new BackendException("connection refused", null));
		}

		@Override
		public CompletionStage<Void> withdraw(String instance) {
			return CompletableFuture.completedFuture(null);
		}

	}

	@Test
	void aLowerCountBeforeAnOutageDoesNotLetTheLoneCountAfterItStandAtOnce() throws Exception {
		try (GuardedBackend guard = GuardedBackend.builder(new Registry())
			.heartbeat(Duration.ofMillis(100))
			.openDuration(Duration.ofSeconds(2))
			.build()) {
			long counting = System.nanoTime() + 10_000_000_000L;
			while (guard.stats().instances() != 3 && System.nanoTime() < counting) {
				Thread.sleep(5);
			}
			assertThat(guard.stats().instances()).isEqualTo(3);
			// One instance leaves (or one heartbeat reads 2) for 300 ms, less than an announcement's life plus an open period.
			this.next.set(2);
			Thread.sleep(300);
			// Then an outage of 1.5 s.
			this.next.set(-1);
			long giveUp = System.nanoTime() + 5_000_000_000L;
			while (guard.breaker().isClosed() && System.nanoTime() < giveUp) {
				Thread.sleep(5);
			}
			assertThat(guard.breaker().isClosed()).isFalse();
			Thread.sleep(1500);
			// Redis back: this instance is the first to announce itself, the others' announcements expired.
			this.next.set(1);
			while (!guard.breaker().isClosed() && System.nanoTime() < giveUp + 5_000_000_000L) {
				Thread.sleep(5);
			}
			Thread.sleep(50);
			int counted = guard.stats().instances();
			assertThat(counted).as("the lone count must not stand at once (docs/reliability.md)").isGreaterThan(1);
		}
	}

}
