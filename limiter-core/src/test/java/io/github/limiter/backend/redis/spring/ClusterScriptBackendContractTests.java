package io.github.limiter.backend.redis.spring;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import io.github.limiter.Decision;
import io.github.limiter.LimitRequest;
import io.github.limiter.RateLimiter;
import io.github.limiter.TimeSource;
import io.github.limiter.algorithm.FixedWindow;
import io.github.limiter.algorithm.TokenBucket;
import io.github.limiter.backend.BackendContractTests;
import io.github.limiter.backend.redis.KeyLayout;
import io.github.limiter.backend.redis.RedisScriptBackend;
import io.github.limiter.spi.RateLimiterBackend;
import io.github.limiter.testsupport.TestRedis;
import io.github.limiter.testsupport.WindowBoundaries;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The contract on a Redis Cluster of three masters: single-slot decisions in one script call, multi-slot decisions
 * slot by slot with refunds, and never a {@code CROSSSLOT} error.
 */
class ClusterScriptBackendContractTests extends BackendContractTests {

	private static LettuceConnectionFactory connectionFactory;

	@BeforeAll
	static void connect() {
		connectionFactory = TestRedis.lettuceCluster();
	}

	@AfterAll
	static void disconnect() {
		connectionFactory.destroy();
	}

	@Override
	protected RateLimiterBackend createBackend(TimeSource clock) {
		return SpringDataRedisScriptExecutor.backend(connectionFactory, Runnable::run)
			.keyPrefix(TestRedis.uniquePrefix())
			.testClock(clock)
			.build();
	}

	@Test
	void aDecisionRejectedOnOneSlotReadsAsOnOneRedis() {
		RedisScriptBackend backend = (RedisScriptBackend) this.limiter.backend();
		TokenBucket perUser = TokenBucket.of("per-user", 5, Duration.ofMinutes(1));
		FixedWindow global = FixedWindow.of("global", 1, Duration.ofMinutes(1));
		List<LimitRequest> call = List.of(LimitRequest.of(perUser, "alice"), LimitRequest.of(global, "everyone"));
		assertThat(KeyLayout.slot(backend.layout().key(call.get(0))))
			.isNotEqualTo(KeyLayout.slot(backend.layout().key(call.get(1))));
		assertThat(this.limiter.acquire(call.toArray(LimitRequest[]::new)).allowed()).isTrue();

		// The per-user bucket, decided first on its own slot, takes a permit and gives it back when the global window
		// rejects: its part says what it holds, as one script call over both limits would, not what it briefly took.
		Decision rejected = this.limiter.acquire(call.toArray(LimitRequest[]::new));
		assertThat(rejected.allowed()).isFalse();
		assertDecision(rejected.parts().get(0), true, 4, 0, Duration.ofSeconds(12));
		assertDecision(rejected.parts().get(1), false, 0, Duration.ofMinutes(1), Duration.ofMinutes(1));
		assertDecision(this.limiter.check(perUser, "alice"), true, 3, 0, Duration.ofSeconds(24));
	}

	@Test
	void keysSpreadOverTheSlotsOfEveryMaster() {
		RedisScriptBackend backend = (RedisScriptBackend) this.limiter.backend();
		FixedWindow limit = FixedWindow.of("spread", 1, Duration.ofMinutes(1));
		Set<Integer> thirds = new HashSet<>();
		for (int i = 0; i < 100; i++) {
			String key = backend.layout().key(LimitRequest.of(limit, "user-" + i));
			thirds.add(KeyLayout.slot(key) * 3 / 16384);
			assertThat(this.limiter.acquire(limit, "user-" + i).allowed()).isTrue();
		}
		assertThat(thirds).containsExactlyInAnyOrder(0, 1, 2);
	}

	@Test
	void callsInFlightAtOnceOnKeysOfManySlotsAreBatchedPerSlotAndEachDecidedExactly() throws InterruptedException {
		// No test clock: the calls go through the lanes as in production, on Redis's clock (this machine's), where the
		// window is aligned to the epoch: a boundary between the rounds would start the counts afresh.
		WindowBoundaries.awayFromTheEndOfTheWindow(Duration.ofHours(1), Duration.ofSeconds(30));
		RateLimiter limiter = RateLimiter.of(SpringDataRedisScriptExecutor.backend(connectionFactory)
			.keyPrefix(TestRedis.uniquePrefix())
			.build());
		FixedWindow limit = FixedWindow.of("slots", 2, Duration.ofHours(1));
		List<CompletableFuture<Decision>> decisions = new ArrayList<>();
		for (int round = 0; round < 3; round++) {
			for (int user = 0; user < 300; user++) {
				decisions.add(limiter.acquireAsync(List.of(LimitRequest.of(limit, "user-" + user)), Duration.ZERO)
					.toCompletableFuture());
			}
		}
		for (int i = 0; i < decisions.size(); i++) {
			assertThat(decisions.get(i).join().allowed()).as("call %d of user-%d", i / 300 + 1, i % 300)
				.isEqualTo(i < 600);
		}
	}

}
