package io.github.limiter.backend.redis.spring;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import io.github.limiter.Decision;
import io.github.limiter.algorithm.LeakyBucket;
import io.github.limiter.algorithm.FixedWindow;
import io.github.limiter.RateLimiter;
import io.github.limiter.Limit;
import io.github.limiter.LimitRequest;
import io.github.limiter.Operation;
import io.github.limiter.algorithm.SlidingWindowCounter;
import io.github.limiter.algorithm.TokenBucket;
import io.github.limiter.backend.redis.RedisScriptBackend;
import io.github.limiter.testsupport.RedisProcess;
import io.github.limiter.testsupport.WindowBoundaries;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * 100,000 attacker-chosen keys on a Redis of its own: every key has a TTL, none remains shortly after its window,
 * and memory returns to its baseline.
 */
class RedisMemoryTests {

	private static RedisProcess redis;

	private static LettuceConnectionFactory connectionFactory;

	private static RedisClient client;

	private static StatefulRedisConnection<String, String> connection;

	@BeforeAll
	static void start() {
		redis = RedisProcess.start();
		connectionFactory = new LettuceConnectionFactory(new RedisStandaloneConfiguration("127.0.0.1", redis.port()));
		connectionFactory.afterPropertiesSet();
		connectionFactory.start();
		client = RedisClient.create(redis.uri());
		connection = client.connect();
	}

	@AfterAll
	static void stop() {
		connection.close();
		client.shutdown();
		connectionFactory.destroy();
		redis.close();
	}

	private static long usedMemory(RedisCommands<String, String> commands) {
		for (String line : commands.info("memory").split("\r\n")) {
			if (line.startsWith("used_memory:")) {
				return Long.parseLong(line.substring("used_memory:".length()));
			}
		}
		throw new IllegalStateException("no used_memory");
	}

	@Test
	void aHundredThousandKeysAllExpireAndMemoryReturnsToBaseline() throws Exception {
		RedisCommands<String, String> commands = connection.sync();
		RedisScriptBackend backend = SpringDataRedisScriptExecutor.backend(connectionFactory, Runnable::run).build();
		// State that lives 6 s after a call: long enough to count the keys, short enough to watch them go.
		Limit bucket = TokenBucket.of("flood", 1, Duration.ofSeconds(6));
		Limit counter = SlidingWindowCounter.of("flood-counter", 5, Duration.ofSeconds(3));
		backend.decide(List.of(LimitRequest.of(bucket, "warm-up")), Operation.CHECK);
		long baseline = usedMemory(commands);

		List<CompletableFuture<Decision>> decisions = new ArrayList<>();
		for (int i = 0; i < 100_000; i++) {
			Limit limit = (i % 2 == 0) ? bucket : counter;
			decisions.add(backend.decideAsync(List.of(LimitRequest.of(limit, "attacker-" + i + "-{x}")), Operation.ACQUIRE)
				.toCompletableFuture());
			if (decisions.size() == 2_000) {
				decisions.forEach(CompletableFuture::join);
				decisions.clear();
			}
		}
		decisions.forEach(CompletableFuture::join);
		long keys = commands.dbsize();
		assertThat(keys).as("keys still alive right after the flood").isGreaterThan(60_000);
		for (String key : commands.keys("limiter:{*").subList(0, 500)) {
			assertThat(commands.pttl(key)).as("TTL of %s", key).isNotEqualTo(-1L);
		}
		long peak = usedMemory(commands);
		long perKey = (peak - baseline) / keys;
		assertThat(perKey).as("bytes per idle limiter").isLessThan(200);

		long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
		while (commands.dbsize() > 0 && System.nanoTime() < deadline) {
			Thread.sleep(200);
		}
		assertThat(commands.dbsize()).as("no key remains after its window").isZero();
		assertThat(usedMemory(commands) - baseline).as("memory back to its baseline").isLessThan(1_000_000L);
		System.out.println("100,000 attacker keys: " + keys + " alive after the flood, " + perKey
				+ " bytes per key; all expired and memory back to baseline");
	}

	@org.junit.jupiter.params.ParameterizedTest
	@org.junit.jupiter.params.provider.MethodSource("constantTimeLimits")
	void anIdleLimiterTakesAtMostAHundredBytes(Limit limit) throws InterruptedException {
		if (limit instanceof FixedWindow) {
			// Its keys live until its window ends, an hour boundary of Redis's clock (this machine's): not before they are
			// counted.
			WindowBoundaries.awayFromTheEndOfTheWindow(Duration.ofHours(1), Duration.ofSeconds(30));
		}
		RedisCommands<String, String> commands = connection.sync();
		RateLimiter limiter = RateLimiter.of(SpringDataRedisScriptExecutor.backend(connectionFactory, Runnable::run).build());
		for (int i = 0; i < 1000; i++) {
			assertThat(limiter.acquire(limit, "user-" + i).allowed()).isTrue();
		}
		long total = 0;
		List<String> keys = commands.keys("limiter:{*}*:" + limit.name() + ":user-*");
		assertThat(keys).hasSize(1000);
		for (String key : keys) {
			total += commands.memoryUsage(key);
		}
		// MEMORY USAGE of keys such as limiter:{3fa9c1}fw:api:user-123, one call each on a limit that keeps state.
		assertThat(total / 1000.0).as("bytes per idle %s limiter", limit.algorithm()).isLessThanOrEqualTo(100);
	}

	static List<Limit> constantTimeLimits() {
		Duration hour = Duration.ofHours(1);
		return List.of(FixedWindow.of("api", 10, hour), SlidingWindowCounter.of("apc", 10, hour), TokenBucket.of("apt", 10, hour),
				LeakyBucket.nodelay("apl", 10, hour, 10));
	}

}
