package io.github.limiter.backend.redis;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

import org.junit.jupiter.api.Test;

import io.github.limiter.Decision;
import io.github.limiter.Limit;
import io.github.limiter.LimitRequest;
import io.github.limiter.Operation;
import io.github.limiter.algorithm.FixedWindow;
import io.github.limiter.spi.BackendException;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A decision over units that run one after the other (cluster slots): once one unit rejects, the decision is a
 * rejection, whatever the units after it can or cannot say.
 */
class CompensatingDecisionTests {

	private static final Limit PER_USER = FixedWindow.of("per-user", 5, Duration.ofMinutes(1));

	private static final Limit GLOBAL = FixedWindow.of("global", 1, Duration.ofMinutes(1));

	@Test
	void aRejectionStaysARejectionWhenASlotAfterItCannotAnswer() {
		Unit rejecting = new Unit(0, GLOBAL, false, null);
		Unit down = new Unit(1, PER_USER, true, new BackendException("the slot's master is down", null));
		Decision decision = CompensatingDecision.decide(List.of(rejecting, down), 2, Operation.ACQUIRE)
			.toCompletableFuture()
			.join();
		assertThat(decision.allowed()).isFalse();
		assertThat(decision.limitName()).isEqualTo("global");
		assertThat(decision.parts().get(1).limitName()).isEqualTo("per-user");
		assertThat(decision.parts().get(1).remaining()).as("a part that could not say claims no room").isZero();
	}

	@Test
	void aSlotAfterTheRejectionThatAnswersReportsItselfUntouched() {
		Unit rejecting = new Unit(0, GLOBAL, false, null);
		Unit later = new Unit(1, PER_USER, true, null);
		Decision decision = CompensatingDecision.decide(List.of(rejecting, later), 2, Operation.ACQUIRE)
			.toCompletableFuture()
			.join();
		assertThat(decision.allowed()).isFalse();
		assertThat(decision.parts().get(1).remaining()).isEqualTo(5);
	}

	/** One limit on one slot: admits or rejects, and answers untouched, or fails to. */
	private record Unit(int position, Limit limit, boolean admits, RuntimeException untakenFailure) implements DecisionUnit {

		@Override
		public List<Integer> positions() {
			return List.of(this.position);
		}

		@Override
		public List<LimitRequest> requests() {
			return List.of(LimitRequest.of(this.limit, "k"));
		}

		@Override
		public CompletionStage<List<Decision>> run(Operation operation) {
			return CompletableFuture.completedFuture(List.of(Decision.of(this.limit.name(), this.admits,
					this.limit.capacity(), this.admits ? this.limit.capacity() - 1 : 0, this.admits ? 0 : 60_000_000, 60_000_000,
					0, 0, null)));
		}

		@Override
		public CompletionStage<List<Decision>> untaken() {
			if (this.untakenFailure != null) {
				return CompletableFuture.failedFuture(this.untakenFailure);
			}
			return CompletableFuture.completedFuture(
					List.of(Decision.of(this.limit.name(), true, this.limit.capacity(), this.limit.capacity(), 0, 0, 0, 0, null)));
		}

		@Override
		public CompletionStage<List<Decision>> refund() {
			return untaken();
		}

	}

}
