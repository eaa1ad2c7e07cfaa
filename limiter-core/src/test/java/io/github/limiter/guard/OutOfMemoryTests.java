package io.github.limiter.guard;

import java.time.Duration;
import java.util.List;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import io.github.limiter.Decision;
import io.github.limiter.Limit;
import io.github.limiter.LimitRequest;
import io.github.limiter.Operation;
import io.github.limiter.algorithm.TokenBucket;
import io.github.limiter.backend.redis.spring.SpringDataRedisScriptExecutor;
import io.github.limiter.spi.RateLimiterBackend;
import io.github.limiter.testsupport.RedisProcess;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A Redis out of memory (with {@code noeviction}) refuses every decision's write: that is an outage, which the
 * guard's probe must see too (its announcement is the first write of its script, refused like the others), so that
 * the circuit opens and the local shares decide, and closes again once Redis has memory.
 */
class OutOfMemoryTests {

	private final Limit limit = TokenBucket.of("oom", 1000, Duration.ofSeconds(1));

	private RedisProcess redis;

	private LettuceConnectionFactory lettuce;

	@BeforeEach
	void start() {
		this.redis = RedisProcess.start();
		this.lettuce = new LettuceConnectionFactory(new RedisStandaloneConfiguration("127.0.0.1", this.redis.port()));
		this.lettuce.afterPropertiesSet();
		this.lettuce.start();
	}

	@AfterEach
	void stop() {
		this.redis.command("CONFIG", "SET", "maxmemory", "0");
		this.lettuce.destroy();
		this.redis.close();
	}

	@Test
	void aRedisThatRefusesWritesForWantOfMemoryIsDownForTheGuardAndUpAgainOnceItHasMemory() throws Exception {
		RateLimiterBackend backend = SpringDataRedisScriptExecutor.backend(this.lettuce, Runnable::run).keyPrefix("oom:").build();
		try (GuardedBackend guard = GuardedBackend.builder(backend)
			.openDuration(Duration.ofMillis(500))
			.heartbeat(Duration.ofMillis(200))
			.failurePolicy(requests -> FailurePolicy.LOCAL)
			.build()) {
			assertThat(until(guard, Decision.Origin.BACKEND)).as("Redis decides at first").isTrue();
			assertThat(this.redis.command("CONFIG", "SET", "maxmemory-policy", "noeviction")).startsWith("+OK");
			assertThat(this.redis.command("CONFIG", "SET", "maxmemory", "1")).startsWith("+OK");
			assertThat(until(guard, Decision.Origin.LOCAL_FALLBACK)).as("the circuit opened: the shares decide").isTrue();
			assertThat(guard.breaker().state()).isNotEqualTo(CircuitBreaker.State.CLOSED);
			assertThat(this.redis.command("CONFIG", "SET", "maxmemory", "0")).startsWith("+OK");
			assertThat(until(guard, Decision.Origin.BACKEND)).as("Redis decides again").isTrue();
		}
	}

	/** Decides until a decision has the origin, for at most 30 s. */
	private boolean until(GuardedBackend guard, Decision.Origin origin) throws InterruptedException {
		long giveUp = System.nanoTime() + Duration.ofSeconds(30).toNanos();
		while (System.nanoTime() < giveUp) {
			if (guard.decide(List.of(LimitRequest.of(this.limit, "k")), Operation.ACQUIRE).origin() == origin) {
				return true;
			}
			Thread.sleep(20);
		}
		return false;
	}

}
