package io.github.limiter.backend.redis.spring;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import io.github.limiter.Decision;
import io.github.limiter.Limit;
import io.github.limiter.LimitRequest;
import io.github.limiter.RateLimiter;
import io.github.limiter.algorithm.FixedWindow;
import io.github.limiter.algorithm.LeakyBucket;
import io.github.limiter.algorithm.SlidingWindowCounter;
import io.github.limiter.algorithm.TokenBucket;
import io.github.limiter.testsupport.RedisProcess;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What a decision costs Redis, counted by Redis itself ({@code INFO commandstats}, commands run by scripts included)
 * on a server of its own: the O(1) algorithms read their key once and write it once per script call, however many
 * coalesced decisions the call holds.
 */
class RedisCommandCountTests {

	private static RedisProcess redis;

	private static LettuceConnectionFactory connectionFactory;

	@BeforeAll
	static void start() {
		redis = RedisProcess.start();
		connectionFactory = new LettuceConnectionFactory(new RedisStandaloneConfiguration("127.0.0.1", redis.port()));
		connectionFactory.afterPropertiesSet();
	}

	@AfterAll
	static void stop() {
		connectionFactory.destroy();
		redis.close();
	}

	static List<Limit> constantTimeLimits() {
		Duration minute = Duration.ofMinutes(1);
		return List.of(FixedWindow.of("fw", 1000, minute), SlidingWindowCounter.of("sc", 1000, minute),
				TokenBucket.of("tb", 1000, minute), LeakyBucket.nodelay("lb", 1000, minute, 1000));
	}

	@ParameterizedTest
	@MethodSource("constantTimeLimits")
	void oneDecisionIsOneEvalshaOneTimeOneReadAndOneWrite(Limit limit) {
		RateLimiter limiter = RateLimiter.of(SpringDataRedisScriptExecutor.backend(connectionFactory, Runnable::run).build());
		limiter.acquire(limit, "warm");
		redis.command("CONFIG", "RESETSTAT");

		assertThat(limiter.acquire(limit, "alone").allowed()).isTrue();

		assertThat(commands()).containsExactlyInAnyOrderEntriesOf(Map.of("evalsha", 1L, "time", 1L, "get", 1L, "set", 1L));
	}

	@ParameterizedTest
	@MethodSource("constantTimeLimits")
	void coalescedDecisionsShareTheReadAndTheWrite(Limit limit) {
		RateLimiter limiter = RateLimiter.of(SpringDataRedisScriptExecutor.backend(connectionFactory, Runnable::run).build());
		limiter.acquire(limit, "warm");
		redis.command("CONFIG", "RESETSTAT");

		List<CompletableFuture<Decision>> decisions = new ArrayList<>();
		for (int i = 0; i < 200; i++) {
			decisions.add(limiter.acquireAsync(List.of(LimitRequest.of(limit, "hot")), Duration.ZERO).toCompletableFuture());
		}
		assertThat(decisions).allSatisfy(decision -> assertThat(decision.join().allowed()).isTrue());

		Map<String, Long> commands = commands();
		long calls = commands.get("evalsha");
		assertThat(calls).as("script calls for 200 decisions").isLessThan(200);
		assertThat(commands).containsEntry("time", calls).containsEntry("get", calls).containsEntry("set", calls);
		long total = commands.values().stream().mapToLong(Long::longValue).sum();
		assertThat(total / 200.0).as("commands per decision").isLessThan(3.0);
	}

	/** Calls per command since the last reset, without the CONFIG RESETSTAT and INFO of the test. */
	@org.junit.jupiter.api.Test
	void redissonsDefaultModeCostsATokenBucketNoMoreThanAPlainRateLimiter() {
		org.redisson.config.Config config = new org.redisson.config.Config();
		config.useSingleServer().setAddress(redis.uri());
		org.redisson.api.RedissonClient redisson = org.redisson.Redisson.create(config);
		try {
			Limit limit = TokenBucket.of("rtb", 1000, Duration.ofMinutes(1));
			RateLimiter limiter = RateLimiter
				.of(io.github.limiter.backend.redisson.RedissonBackend.builder(redisson).keyPrefix("count:").build());
			limiter.acquire(limit, "warm");
			org.redisson.api.RRateLimiter plain = redisson.getRateLimiter("plain");
			plain.trySetRate(org.redisson.api.RateType.OVERALL, 1000, Duration.ofMinutes(1), Duration.ofMinutes(1));
			plain.tryAcquire();

			redis.command("CONFIG", "RESETSTAT");
			assertThat(limiter.acquire(limit, "alone").remaining()).isEqualTo(999);
			Map<String, Long> ours = commands();
			redis.command("CONFIG", "RESETSTAT");
			assertThat(plain.tryAcquire()).isTrue();
			Map<String, Long> theirs = commands();
			long oursTotal = ours.values().stream().mapToLong(Long::longValue).sum();
			long theirsTotal = theirs.values().stream().mapToLong(Long::longValue).sum();
			System.out.println("One token-bucket decision: limiter on Redisson (default mode) " + oursTotal + " commands "
					+ ours + ", with remaining permits; plain RRateLimiter.tryAcquire " + theirsTotal + " " + theirs
					+ ", yes or no only");
			assertThat(ours).containsExactlyInAnyOrderEntriesOf(Map.of("evalsha", 1L, "time", 1L, "get", 1L, "set", 1L));
			assertThat(oursTotal).isLessThanOrEqualTo(theirsTotal);
		}
		finally {
			redisson.shutdown();
		}
	}

	private static Map<String, Long> commands() {
		Map<String, Long> calls = new TreeMap<>();
		for (String line : redis.command("INFO", "commandstats").split("\r?\n")) {
			// Redis 7 counts a subcommand on its own line: cmdstat_config|resetstat.
			if (line.startsWith("cmdstat_") && !line.startsWith("cmdstat_info:") && !line.startsWith("cmdstat_config:")
					&& !line.startsWith("cmdstat_config|")) {
				String name = line.substring("cmdstat_".length(), line.indexOf(':'));
				int at = line.indexOf("calls=") + "calls=".length();
				calls.put(name, Long.parseLong(line.substring(at, line.indexOf(',', at))));
			}
		}
		return calls;
	}

}
