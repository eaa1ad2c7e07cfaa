package io.github.limiter.benchmarks.redis;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;

import io.github.bucket4j.BucketConfiguration;
import io.github.bucket4j.distributed.ExpirationAfterWriteStrategy;
import io.github.bucket4j.redis.lettuce.Bucket4jLettuce;
import io.github.bucket4j.redis.lettuce.cas.LettuceBasedProxyManager;
import io.lettuce.core.RedisClient;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import io.lettuce.core.codec.ByteArrayCodec;
import org.redisson.Redisson;
import org.redisson.api.RRateLimiter;
import org.redisson.api.RateType;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import io.github.limiter.Limit;
import io.github.limiter.RateLimiter;
import io.github.limiter.algorithm.FixedWindow;
import io.github.limiter.algorithm.LeakyBucket;
import io.github.limiter.algorithm.SlidingWindowCounter;
import io.github.limiter.algorithm.SlidingWindowLog;
import io.github.limiter.algorithm.TokenBucket;
import io.github.limiter.backend.redis.RedisScriptBackend;
import io.github.limiter.backend.redis.spring.SpringDataRedisScriptExecutor;
import io.github.limiter.backend.redisson.RedissonBackend;

import io.github.limiter.guard.GuardedBackend;
import io.github.limiter.spi.RateLimiterBackend;

/**
 * Everything the harness compares, each on its own client to the same Redis: our backends and the peers.
 */
final class Contenders {

	private Contenders() {
	}

	/**
	 * Every contender, the floor first.
	 * @param port the Redis port
	 * @return the contenders, to be closed by the caller
	 */
	static List<Contender> all(int port) {
		List<Contender> all = new ArrayList<>();
		all.add(new Floor(port));
		LettuceConnectionFactory factory = new LettuceConnectionFactory(new RedisStandaloneConfiguration("127.0.0.1", port));
		factory.afterPropertiesSet();
		Function<RedisScriptBackend.Builder, RateLimiterBackend> plain = RedisScriptBackend.Builder::build;
		all.add(new Ours("limiter fixed window", factory, plain, rule -> FixedWindow.of("bench", rule.permits(),
				Duration.ofMillis(rule.periodMillis()))));
		all.add(new Ours("limiter sliding counter", factory, plain, rule -> SlidingWindowCounter.of("bench", rule.permits(),
				Duration.ofMillis(rule.periodMillis()))));
		all.add(new Ours("limiter token bucket", factory, plain, Contenders::tokenBucket));
		all.add(new Ours("limiter leaky bucket", factory, plain, rule -> LeakyBucket.nodelay("bench", rule.permits(),
				Duration.ofMillis(rule.periodMillis()), rule.permits())));
		// A log stores one entry per permit, so it accepts at most a million: far more than a round admits.
		all.add(new Ours("limiter sliding log", factory, plain, rule -> SlidingWindowLog.of("bench",
				Math.min(rule.permits(), 1_000_000), Duration.ofMillis(rule.periodMillis()))));
		all.add(new Ours("limiter token bucket, no coalescing/cache", factory,
				builder -> builder.coalesce(false).denialCacheSize(0).build(), Contenders::tokenBucket));
		all.add(new Ours("limiter token bucket, guarded (starter)", factory,
				builder -> GuardedBackend.builder(builder.build()).build(), Contenders::tokenBucket));
		all.add(new OursOnRedisson(port));
		all.add(new RedissonRateLimiter(port));
		all.add(new Bucket4jLettuce(port));
		all.add(new SpringCloudGateway(port));
		return all;
	}

	private static Limit tokenBucket(Contender.Rule rule) {
		return TokenBucket.of("bench", rule.permits(), Duration.ofMillis(rule.periodMillis()));
	}

	/** The floor: a bare fixed window, {@code INCR} and {@code PEXPIRE} on the first hit, by {@code EVALSHA}. */
	static final class Floor implements Contender {

		private static final String SCRIPT = "local c = redis.call('INCR', KEYS[1]) "
				+ "if c == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end return c";

		private final RedisClient client;

		private final StatefulRedisConnection<String, String> connection;

		private final RedisCommands<String, String> redis;

		private final String sha;

		private String[] args;

		private long permits;

		Floor(int port) {
			this.client = RedisClient.create("redis://127.0.0.1:" + port);
			this.connection = this.client.connect();
			this.redis = this.connection.sync();
			this.sha = this.redis.scriptLoad(SCRIPT);
		}

		@Override
		public String name() {
			return "floor: INCR + PEXPIRE";
		}

		@Override
		public void prepare(Rule rule) {
			this.redis.scriptLoad(SCRIPT);
			this.args = new String[] { Long.toString(rule.periodMillis()) };
			this.permits = rule.permits();
		}

		@Override
		public boolean decide(String key) {
			Long count = this.redis.evalsha(this.sha, ScriptOutputType.INTEGER, new String[] { "floor:" + key }, this.args);
			return count <= this.permits;
		}

		@Override
		public void close() {
			this.connection.close();
			this.client.shutdown();
		}

	}

	/** Our Lua backend through Spring Data Redis on Lettuce, as the starter configures it. */
	static final class Ours implements Contender {

		private final String name;

		private final RateLimiter limiter;

		private final Function<Rule, Limit> limits;

		private Limit limit;

		Ours(String name, LettuceConnectionFactory factory, Function<RedisScriptBackend.Builder, RateLimiterBackend> backend,
				Function<Rule, Limit> limits) {
			this.name = name;
			this.limiter = RateLimiter.of(backend.apply(SpringDataRedisScriptExecutor.backend(factory, Runnable::run)));
			this.limits = limits;
		}

		@Override
		public String name() {
			return this.name;
		}

		@Override
		public void prepare(Rule rule) {
			this.limit = this.limits.apply(rule);
		}

		@Override
		public boolean decide(String key) {
			return this.limiter.acquire(this.limit, key).allowed();
		}

	}

	/** Our backend on a Redisson client: token buckets on our script (exact), coalescing and denial cache on. */
	static final class OursOnRedisson implements Contender {

		private final RedissonClient redisson;

		private final RateLimiter limiter;

		private Limit limit;

		OursOnRedisson(int port) {
			this.redisson = redisson(port);
			this.limiter = RateLimiter.of(RedissonBackend.builder(this.redisson).tokenBucketMode(RedissonBackend.TokenBucketMode.SCRIPT).build());
		}

		@Override
		public String name() {
			return "limiter token bucket on Redisson";
		}

		@Override
		public void prepare(Rule rule) {
			this.limit = tokenBucket(rule);
		}

		@Override
		public boolean decide(String key) {
			return this.limiter.acquire(this.limit, key).allowed();
		}

		@Override
		public void close() {
			this.redisson.shutdown();
		}

	}

	/** Redisson's {@code RRateLimiter.tryAcquire}, one limiter per key, set up on first use. */
	static final class RedissonRateLimiter implements Contender {

		private final RedissonClient redisson;

		private final Map<String, RRateLimiter> limiters = new ConcurrentHashMap<>();

		private Rule rule;

		RedissonRateLimiter(int port) {
			this.redisson = redisson(port);
		}

		@Override
		public String name() {
			return "Redisson RRateLimiter";
		}

		@Override
		public void prepare(Rule rule) {
			this.rule = rule;
			this.limiters.clear();
		}

		@Override
		public boolean decide(String key) {
			return this.limiters.computeIfAbsent(key, this::create).tryAcquire();
		}

		private RRateLimiter create(String key) {
			RRateLimiter limiter = this.redisson.getRateLimiter("rrl:" + key);
			limiter.trySetRate(RateType.OVERALL, this.rule.permits(), Duration.ofMillis(this.rule.periodMillis()));
			return limiter;
		}

		@Override
		public void close() {
			this.redisson.shutdown();
		}

	}

	/** Bucket4j's Lettuce proxy manager (compare-and-swap), one bucket per key. */
	static final class Bucket4jLettuce implements Contender {

		private final RedisClient client;

		private final StatefulRedisConnection<byte[], byte[]> connection;

		private final LettuceBasedProxyManager<byte[]> buckets;

		private BucketConfiguration configuration;

		Bucket4jLettuce(int port) {
			this.client = RedisClient.create("redis://127.0.0.1:" + port);
			this.connection = this.client.connect(ByteArrayCodec.INSTANCE);
			this.buckets = io.github.bucket4j.redis.lettuce.Bucket4jLettuce.casBasedBuilder(this.connection)
				.expirationAfterWrite(ExpirationAfterWriteStrategy.basedOnTimeForRefillingBucketUpToMax(Duration.ofSeconds(10)))
				.build();
		}

		@Override
		public String name() {
			return "Bucket4j Lettuce (CAS)";
		}

		@Override
		public void prepare(Rule rule) {
			this.configuration = BucketConfiguration.builder()
				.addLimit(limit -> limit.capacity(rule.permits()).refillGreedy(rule.permits(), Duration.ofMillis(rule.periodMillis())))
				.build();
		}

		@Override
		public boolean decide(String key) {
			return this.buckets.builder().build(("b4j:" + key).getBytes(StandardCharsets.UTF_8), this.configuration)
				.tryConsume(1);
		}

		@Override
		public void close() {
			this.connection.close();
			this.client.shutdown();
		}

	}

	/**
	 * Spring Cloud Gateway's {@code RedisRateLimiter} script, read from its jar at run time, called the way the gateway
	 * calls it: two keys, rate and burst, an empty time so that the script reads {@code TIME}, one token.
	 */
	static final class SpringCloudGateway implements Contender {

		private static final String PATH = "META-INF/scripts/request_rate_limiter.lua";

		private final RedisClient client;

		private final StatefulRedisConnection<String, String> connection;

		private final RedisCommands<String, String> redis;

		private final String script;

		private String sha;

		private String[] args;

		SpringCloudGateway(int port) {
			this.client = RedisClient.create("redis://127.0.0.1:" + port);
			this.connection = this.client.connect();
			this.redis = this.connection.sync();
			try (InputStream in = Contenders.class.getClassLoader().getResourceAsStream(PATH)) {
				if (in == null) {
					throw new IllegalStateException(PATH + " is not on the classpath: is spring-cloud-gateway-server-webflux there?");
				}
				this.script = new String(in.readAllBytes(), StandardCharsets.UTF_8);
			}
			catch (IOException ex) {
				throw new UncheckedIOException(ex);
			}
		}

		@Override
		public String name() {
			return "Spring Cloud Gateway script";
		}

		@Override
		public void prepare(Rule rule) {
			this.sha = this.redis.scriptLoad(this.script);
			this.args = new String[] { Double.toString(rule.permitsPerSecond()), Long.toString(rule.permits()), "", "1" };
		}

		@Override
		public boolean decide(String key) {
			List<Long> reply = this.redis.evalsha(this.sha, ScriptOutputType.MULTI,
					new String[] { "request_rate_limiter.{" + key + "}.tokens", "request_rate_limiter.{" + key + "}.timestamp" },
					this.args);
			return reply.get(0) == 1L;
		}

		@Override
		public void close() {
			this.connection.close();
			this.client.shutdown();
		}

	}

	private static RedissonClient redisson(int port) {
		Config config = new Config();
		config.useSingleServer().setAddress("redis://127.0.0.1:" + port);
		return Redisson.create(config);
	}

}
