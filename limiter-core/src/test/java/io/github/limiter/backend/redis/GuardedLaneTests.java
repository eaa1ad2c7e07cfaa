package io.github.limiter.backend.redis;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

import org.junit.jupiter.api.Test;

import io.github.limiter.Decision;
import io.github.limiter.LimitRequest;
import io.github.limiter.Operation;
import io.github.limiter.algorithm.TokenBucket;
import io.github.limiter.guard.GuardedBackend;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The guard's deadline reaches the lanes of the Redis backend however the guard calls it: a batch whose callers all
 * gave up holds its lane no longer, so the calls after it are decided by Redis again.
 */
class GuardedLaneTests {

	private final TokenBucket limit = TokenBucket.of("guarded-lane", 10, Duration.ofSeconds(1));

	/** The keys of each decision batch sent to Redis. */
	private final List<List<String>> sent = new CopyOnWriteArrayList<>();

	/** Answers the instances script (the guard's probe) at once, and never answers a decision: a master that died. */
	private final RedisScriptExecutor deadMaster = new RedisScriptExecutor() {

		@Override
		public CompletionStage<List<Object>> execute(LimiterScript script, List<String> keys, List<String> args) {
			if (script == LimiterScript.instances()) {
				return CompletableFuture.completedFuture(List.of(1L));
			}
			GuardedLaneTests.this.sent.add(keys);
			return new CompletableFuture<>();
		}

		@Override
		public boolean isCluster() {
			return false;
		}

	};

	@Test
	void withAThreadOfItsOwnForCallsTheGuardsDeadlineStillFreesTheLane() throws Exception {
		ExecutorService calls = Executors.newCachedThreadPool();
		RedisScriptBackend backend = RedisScriptBackend.builder(this.deadMaster).keyPrefix("t:").build();
		try (GuardedBackend guard = GuardedBackend.builder(backend)
			.deadline(Duration.ofMillis(50))
			.maxDeadline(Duration.ofMillis(100))
			.callExecutor(calls)
			.build()) {
			Decision lost = decide(guard, "k1");
			assertThat(lost.origin()).isEqualTo(Decision.Origin.UNDECIDED);
			assertThat(this.sent).hasSize(1);

			// Without the deadline reaching the lane, this call would wait behind the lost one until the client's
			// own timeout (a minute, in Lettuce).
			decide(guard, "k2");
			long end = System.nanoTime() + 10_000_000_000L;
			while (this.sent.size() < 2 && System.nanoTime() < end) {
				Thread.sleep(5);
			}
			assertThat(this.sent).as("the call after the lost batch went to Redis").hasSize(2);
			assertThat(this.sent.get(1).get(0)).endsWith("k2");
		}
		finally {
			calls.shutdownNow();
		}
	}

	private Decision decide(GuardedBackend guard, String key) {
		return guard.decideAsync(List.of(LimitRequest.of(this.limit, key)), Operation.ACQUIRE).toCompletableFuture().join();
	}

}
