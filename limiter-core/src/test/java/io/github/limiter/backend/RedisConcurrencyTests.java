package io.github.limiter.backend;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.function.Function;
import java.util.stream.Stream;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.redisson.api.RedissonClient;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.jedis.JedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import io.github.limiter.Limit;
import io.github.limiter.LimitRequest;
import io.github.limiter.RateLimiter;
import io.github.limiter.algorithm.FixedWindow;
import io.github.limiter.algorithm.LeakyBucket;
import io.github.limiter.algorithm.SlidingWindowCounter;
import io.github.limiter.algorithm.SlidingWindowLog;
import io.github.limiter.algorithm.TokenBucket;
import io.github.limiter.backend.redis.spring.SpringDataRedisScriptExecutor;
import io.github.limiter.backend.redisson.RedissonBackend;
import io.github.limiter.spi.RateLimiterBackend;
import io.github.limiter.testsupport.TestRedis;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Two application instances (two independent clients) and 32 threads hammer one key on a real Redis, reading the
 * time from Redis: no algorithm ever admits more than it allows, and the exact ones admit exactly the limit.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class RedisConcurrencyTests {

	private static final int LIMIT = 200;

	private static final int THREADS = 32;

	private static final int CALLS_PER_THREAD = 20;

	private final List<AutoCloseable> clients = new ArrayList<>();

	private ExecutorService pool;

	@BeforeAll
	void startPool() {
		this.pool = Executors.newFixedThreadPool(THREADS);
	}

	@AfterAll
	void stop() throws Exception {
		this.pool.shutdownNow();
		for (AutoCloseable client : this.clients) {
			client.close();
		}
	}

	Stream<Arguments> cases() {
		List<Arguments> cases = new ArrayList<>();
		List<Limit> limits = List.of(FixedWindow.of("fw", LIMIT, Duration.ofDays(3650)),
				SlidingWindowLog.of("log", LIMIT, Duration.ofHours(1)),
				SlidingWindowCounter.of("counter", LIMIT, Duration.ofDays(3650)),
				TokenBucket.of("bucket", LIMIT, LIMIT, Duration.ofHours(1)),
				LeakyBucket.nodelay("leaky", LIMIT, Duration.ofHours(1), LIMIT - 1));
		for (String backend : List.of("lettuce", "jedis", "redisson", "redisson-rratelimiter", "lettuce-cluster")) {
			for (Limit limit : limits) {
				cases.add(Arguments.of(backend, limit));
			}
		}
		return cases.stream();
	}

	@ParameterizedTest(name = "{0}: {1}")
	@MethodSource("cases")
	void twoInstancesNeverOverAdmitOnOneKey(String backend, Limit limit) throws Exception {
		String prefix = TestRedis.uniquePrefix();
		RateLimiter first = RateLimiter.of(backend(backend, prefix));
		RateLimiter second = RateLimiter.of(backend(backend, prefix));
		int admitted = hammer(i -> ((i % 2 == 0) ? first : second).acquire(limit, "hot").allowed());
		assertThat(admitted).isEqualTo(LIMIT);
	}

	@ParameterizedTest(name = "{0}")
	@MethodSource("backends")
	void severalLimitsStayAllOrNothingUnderConcurrency(String backend) throws Exception {
		String prefix = TestRedis.uniquePrefix();
		Limit perUser = FixedWindow.of("user", 100, Duration.ofDays(3650));
		Limit global = SlidingWindowLog.of("global", 150, Duration.ofHours(1));
		LimitRequest[] call = { LimitRequest.of(perUser, "alice"), LimitRequest.of(global, "") };
		RateLimiter first = RateLimiter.of(backend(backend, prefix));
		RateLimiter second = RateLimiter.of(backend(backend, prefix));
		int admitted = hammer(i -> ((i % 2 == 0) ? first : second).acquire(call).allowed());
		assertThat(admitted).isEqualTo(100);
		assertThat(first.check(global, "").remaining()).as("the global limit lost nothing to rejected calls")
			.isEqualTo(150 - 100 - 1);
	}

	@ParameterizedTest(name = "{0}")
	@MethodSource("backends")
	void manyThreadsInTheSameMicrosecondEachGetTheirOwnLogEntry(String backend) throws Exception {
		String prefix = TestRedis.uniquePrefix();
		io.github.limiter.TimeSource frozen = () -> 1_780_000_000_000_000L;
		RateLimiterBackend first = backend(backend, prefix, frozen);
		RateLimiterBackend second = backend(backend, prefix, frozen);
		Limit log = SlidingWindowLog.of("same-instant", 50, Duration.ofMinutes(1));
		java.util.Set<String> tokens = java.util.concurrent.ConcurrentHashMap.newKeySet();
		int admitted = hammer(i -> {
			io.github.limiter.Decision decision = ((i % 2 == 0) ? first : second)
				.decide(List.of(LimitRequest.of(log, "hot")), io.github.limiter.Operation.ACQUIRE);
			if (decision.allowed()) {
				tokens.add(decision.token());
			}
			return decision.allowed();
		});
		assertThat(admitted).isEqualTo(50);
		assertThat(tokens).as("no admitted request lost or merged").hasSize(50);
		assertThat(RateLimiter.of(first).check(log, "hot").allowed()).isFalse();
	}

	Stream<String> backends() {
		return Stream.of("lettuce", "jedis", "redisson", "lettuce-cluster");
	}

	private int hammer(Function<Integer, Boolean> call) throws Exception {
		CountDownLatch start = new CountDownLatch(1);
		List<Future<Integer>> results = new ArrayList<>();
		for (int t = 0; t < THREADS; t++) {
			int thread = t;
			Callable<Integer> task = () -> {
				start.await();
				int admitted = 0;
				for (int i = 0; i < CALLS_PER_THREAD; i++) {
					if (call.apply(thread)) {
						admitted++;
					}
				}
				return admitted;
			};
			results.add(this.pool.submit(task));
		}
		start.countDown();
		int admitted = 0;
		for (Future<Integer> result : results) {
			admitted += result.get();
		}
		return admitted;
	}

	private RateLimiterBackend backend(String kind, String prefix) {
		return backend(kind, prefix, null);
	}

	private RateLimiterBackend backend(String kind, String prefix, io.github.limiter.TimeSource testClock) {
		return switch (kind) {
			case "lettuce" -> script(SpringDataRedisScriptExecutor.backend(lettuce(), Runnable::run), prefix, testClock);
			case "jedis" -> script(SpringDataRedisScriptExecutor.backend(jedis(), Runnable::run), prefix, testClock);
			case "lettuce-cluster" -> script(SpringDataRedisScriptExecutor.backend(lettuceCluster(), Runnable::run), prefix,
					testClock);
			case "redisson" -> {
				RedissonBackend.Builder builder = RedissonBackend.builder(redisson())
					.keyPrefix(prefix)
					.tokenBucketMode(RedissonBackend.TokenBucketMode.SCRIPT);
				yield (testClock != null) ? builder.testClock(testClock).build() : builder.build();
			}
			case "redisson-rratelimiter" -> RedissonBackend.builder(redisson()).keyPrefix(prefix).build();
			default -> throw new IllegalArgumentException(kind);
		};
	}

	private static RateLimiterBackend script(io.github.limiter.backend.redis.RedisScriptBackend.Builder builder,
			String prefix, io.github.limiter.TimeSource testClock) {
		builder.keyPrefix(prefix);
		return (testClock != null) ? builder.testClock(testClock).build() : builder.build();
	}

	private RedisConnectionFactory lettuce() {
		return closing(TestRedis.lettuce());
	}

	private RedisConnectionFactory lettuceCluster() {
		return closing(TestRedis.lettuceCluster());
	}

	private RedisConnectionFactory jedis() {
		JedisConnectionFactory factory = new JedisConnectionFactory(
				new RedisStandaloneConfiguration("127.0.0.1", TestRedis.standalone().port()));
		factory.getPoolConfig().setMaxTotal(THREADS);
		factory.afterPropertiesSet();
		factory.start();
		this.clients.add(factory::destroy);
		return factory;
	}

	private RedisConnectionFactory closing(LettuceConnectionFactory factory) {
		this.clients.add(factory::destroy);
		return factory;
	}

	private RedissonClient redisson() {
		RedissonClient client = TestRedis.redisson();
		this.clients.add(client::shutdown);
		return client;
	}

}
