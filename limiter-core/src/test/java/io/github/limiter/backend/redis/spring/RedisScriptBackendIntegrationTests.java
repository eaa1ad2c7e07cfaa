package io.github.limiter.backend.redis.spring;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletionStage;

import io.lettuce.core.RedisClient;
import io.lettuce.core.ScanArgs;
import io.lettuce.core.ScanIterator;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import io.github.limiter.Decision;
import io.github.limiter.Limit;
import io.github.limiter.LimitRequest;
import io.github.limiter.Operation;
import io.github.limiter.RateLimiter;
import io.github.limiter.algorithm.CalendarUnit;
import io.github.limiter.algorithm.FixedWindow;
import io.github.limiter.algorithm.LeakyBucket;
import io.github.limiter.algorithm.SlidingWindowCounter;
import io.github.limiter.algorithm.SlidingWindowLog;
import io.github.limiter.algorithm.TokenBucket;
import io.github.limiter.backend.redis.RedisScriptBackend;
import io.github.limiter.testsupport.TestRedis;
import io.github.limiter.testsupport.WindowBoundaries;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * The Redis backend in real time, on the Redis clock: keys expire, scripts reload, the time is Redis's.
 */
class RedisScriptBackendIntegrationTests {

	private static LettuceConnectionFactory connectionFactory;

	private static RedisClient client;

	private static StatefulRedisConnection<String, String> connection;

	private static RedisCommands<String, String> redis;

	@BeforeAll
	static void connect() {
		connectionFactory = TestRedis.lettuce();
		client = RedisClient.create(TestRedis.standalone().uri());
		connection = client.connect();
		redis = connection.sync();
	}

	@AfterAll
	static void disconnect() {
		connection.close();
		client.shutdown();
		connectionFactory.destroy();
	}

	private static RedisScriptBackend backend(String prefix) {
		return SpringDataRedisScriptExecutor.backend(connectionFactory, Runnable::run).keyPrefix(prefix).build();
	}

	private static List<String> keys(String prefix) {
		return ScanIterator.scan(redis, ScanArgs.Builder.matches(prefix + "*").limit(1000)).stream().toList();
	}

	/**
	 * A record that saturates a sliding log drops, among entries of one time, the members that sort first. When the
	 * admitted call's token sorts after the record's (tokens count in base 36: "zzz" then "1000"), its member used to
	 * survive the trim, and its refund then freed a permit the record had counted.
	 */
	@Test
	void aRecordThatSaturatesALogLeavesNothingForAnEarlierCallsRefundToFree() {
		// One instant for both calls, as when they come in the same microsecond.
		RateLimiter limiter = RateLimiter.of(SpringDataRedisScriptExecutor.backend(connectionFactory, Runnable::run)
			.keyPrefix(TestRedis.uniquePrefix())
			.testClock(new io.github.limiter.testsupport.ManualClock(java.time.Instant.now()))
			.build());
		Limit log = SlidingWindowLog.of("saturated", 1, Duration.ofMinutes(1));
		String token = io.github.limiter.spi.InstanceIdentity.nextToken();
		while (!token.substring(token.lastIndexOf('.') + 1).matches("z+y")) {
			token = io.github.limiter.spi.InstanceIdentity.nextToken();
		}
		Decision admitted = limiter.acquire(log, "k");
		assertThat(admitted.token()).as("a token that sorts after the next one").matches(".*\\.z+");
		limiter.record(log, "k");
		limiter.refund(List.of(LimitRequest.of(log, "k")), admitted);
		assertThat(limiter.acquire(log, "k").allowed()).as("the record stands").isFalse();
	}

	/**
	 * A window's state is one integer's digits (the window's number, each count, each count's number of digits), which
	 * Redis keeps in the object itself, 16 bytes less per key than text; a count of more than nine digits, and a state
	 * written as text by an earlier version, read back as the counts they hold.
	 */
	@Test
	void aWindowsStateIsOneIntegerAndItsEarlierTextStillReads() {
		String prefix = TestRedis.uniquePrefix();
		java.time.Instant at = java.time.Instant.parse("2026-11-27T10:00:15Z");
		RateLimiter limiter = RateLimiter.of(SpringDataRedisScriptExecutor.backend(connectionFactory, Runnable::run)
			.keyPrefix(prefix)
			.testClock(new io.github.limiter.testsupport.ManualClock(at))
			.build());
		io.github.limiter.backend.redis.KeyLayout layout = new io.github.limiter.backend.redis.KeyLayout(prefix);
		long minute = at.getEpochSecond() / 60;
		Limit window = FixedWindow.of("fw", 10, Duration.ofMinutes(1));
		Limit counter = SlidingWindowCounter.of("sc", 10, Duration.ofMinutes(1));
		String fixedKey = layout.key(LimitRequest.of(window, "k"));
		String counterKey = layout.key(LimitRequest.of(counter, "k"));

		limiter.acquire(window, "k", 3);
		limiter.acquire(counter, "k", 2);
		assertThat(redis.get(fixedKey)).isEqualTo(minute + "3" + "1");
		assertThat(redis.get(counterKey)).isEqualTo(minute + "2" + "0" + "11");
		assertThat(redis.objectEncoding(fixedKey)).isEqualTo("int");
		assertThat(redis.objectEncoding(counterKey)).isEqualTo("int");

		// Written by the version before: text, with spaces.
		redis.psetex(fixedKey, 60_000, minute + " 4");
		assertThat(limiter.acquire(window, "k").remaining()).isEqualTo(5);
		assertThat(redis.get(fixedKey)).isEqualTo(minute + "5" + "1");
		String textCounter = layout.key(LimitRequest.of(counter, "text"));
		redis.psetex(textCounter, 120_000, minute + " 6 2");
		redis.psetex(counterKey, 120_000, minute + "6" + "2" + "11");
		Decision fromText = limiter.acquire(counter, "text");
		Decision fromDigits = limiter.acquire(counter, "k");
		assertThat(fromText.allowed()).isTrue();
		assertThat(fromText.remaining()).isEqualTo(fromDigits.remaining());
		assertThat(fromText.resetAfter()).isEqualTo(fromDigits.resetAfter());
		assertThat(redis.get(textCounter)).isEqualTo(minute + "7" + "2" + "11");

		// Ten digits and more stay text.
		Limit large = FixedWindow.of("large", 20_000_000_000L, Duration.ofMinutes(1));
		String largeKey = layout.key(LimitRequest.of(large, "k"));
		limiter.acquire(large, "k", 12_345_678_901L);
		assertThat(redis.get(largeKey)).isEqualTo(minute + " 12345678901");
		assertThat(limiter.acquire(large, "k").remaining()).isEqualTo(20_000_000_000L - 12_345_678_902L);
		assertThat(redis.get(largeKey)).isEqualTo(minute + " 12345678902");
	}

	@Test
	void everyKeyHasATtlAndNoneRemainsOnceTheLongestWindowHasPassed() throws Exception {
		String prefix = TestRedis.uniquePrefix();
		RateLimiter limiter = RateLimiter.of(backend(prefix));
		io.github.limiter.backend.redis.KeyLayout layout = new io.github.limiter.backend.redis.KeyLayout(prefix);
		Duration window = Duration.ofMillis(1000);
		List<Limit> limits = List.of(FixedWindow.of("fw", 5, window), SlidingWindowLog.of("log", 5, window),
				SlidingWindowCounter.of("counter", 5, Duration.ofMillis(500)), TokenBucket.of("bucket", 5, window),
				LeakyBucket.queueing("leaky", 5, window, 4));
		for (Limit limit : limits) {
			for (int i = 0; i < 3; i++) {
				assertThat(limiter.acquire(limit, "user-" + i).allowed()).isTrue();
				// Checked at once (a bucket's key lives 200 ms): every key has a TTL within the window. An
				// epoch-aligned fixed window may have just ended, and its key expired (-2).
				long ttl = redis.pttl(layout.key(io.github.limiter.LimitRequest.of(limit, "user-" + i)));
				assertThat(ttl > 0 && ttl <= 1000 || (ttl == -2 && limit instanceof FixedWindow))
					.as("TTL of %s for user-%d: %d ms", limit, i, ttl).isTrue();
			}
		}
		Thread.sleep(1100);
		assertThat(keys(prefix)).isEmpty();
	}

	@Test
	void aWarmingBucketsKeyLivesUntilTheBucketIsColdAgain() throws Exception {
		String prefix = TestRedis.uniquePrefix();
		RateLimiter limiter = RateLimiter.of(backend(prefix));
		Limit limit = TokenBucket.builder("warming").capacity(1).refill(10, Duration.ofSeconds(1))
			.warmup(Duration.ofMillis(400)).build();
		assertThat(limiter.acquire(limit, "k").allowed()).isTrue();
		// The cold permit pushed the arrival time 250 ms ahead (100 ms and a 150 ms surcharge) and spent 100 ms of
		// the 400 ms of stored idleness: 250 ms until the bucket is full, 100 ms more until it is cold again.
		String key = new io.github.limiter.backend.redis.KeyLayout(prefix).key(io.github.limiter.LimitRequest.of(limit, "k"));
		long ttl = redis.pttl(key);
		assertThat(keys(prefix)).as("the bucket's only key").isSubsetOf(key);
		// (-2: a machine so slow that the key already expired)
		assertThat(ttl == -2 || (ttl > 0 && ttl <= 350)).as("TTL %d ms", ttl).isTrue();
		Thread.sleep(450);
		assertThat(keys(prefix)).isEmpty();
	}

	@Test
	void overridesAreSharedByBackendsOnOnePrefixAndHaveNoTtl() {
		String prefix = TestRedis.uniquePrefix();
		RedisScriptBackend one = backend(prefix);
		RedisScriptBackend other = backend(prefix);
		assertThat(one.overrides().toCompletableFuture().join()).isEmpty();
		one.override("api", Map.of("max", "20", "window", "1s")).toCompletableFuture().join();
		one.override("login", Map.of("max", "3")).toCompletableFuture().join();
		assertThat(other.overrides().toCompletableFuture().join())
			.isEqualTo(Map.of("api", Map.of("max", "20", "window", "1s"), "login", Map.of("max", "3")));
		assertThat(redis.pttl(prefix + "overrides")).as("configuration, not state").isEqualTo(-1L);
		assertThat(other.override("api", Map.of()).toCompletableFuture().join())
			.isEqualTo(Map.of("login", Map.of("max", "3")));
		assertThatIllegalArgumentException().isThrownBy(() -> one.override("api", Map.of("max", "1\nwindow=1ms")))
			.withMessageContaining("line breaks");
		other.override("login", Map.of()).toCompletableFuture().join();
		assertThat(keys(prefix)).isEmpty();
	}

	@Test
	void checkWritesNothing() {
		String prefix = TestRedis.uniquePrefix();
		RateLimiter limiter = RateLimiter.of(backend(prefix));
		for (Limit limit : List.of(FixedWindow.of("fw", 5, Duration.ofMinutes(1)),
				SlidingWindowLog.of("log", 5, Duration.ofMinutes(1)),
				SlidingWindowCounter.of("counter", 5, Duration.ofMinutes(1)), TokenBucket.of("bucket", 5, Duration.ofMinutes(1)))) {
			assertThat(limiter.check(limit, "k").allowed()).isTrue();
		}
		assertThat(keys(prefix)).isEmpty();
	}

	@Test
	void theTimeComesFromRedisNotFromTheClient() {
		RateLimiter limiter = RateLimiter.of(backend(TestRedis.uniquePrefix()));
		List<String> time = redis.time();
		long redisMicros = Long.parseLong(time.get(0)) * 1_000_000L + Long.parseLong(time.get(1));
		Decision decision = limiter.acquire(FixedWindow.of("time", 1, Duration.ofMinutes(1)), "k");
		assertThat(decision.timeMicros()).isBetween(redisMicros, redisMicros + 5_000_000L);
	}

	@Test
	void calendarWindowsFollowTheRedisClock() throws InterruptedException {
		RateLimiter limiter = RateLimiter.of(backend(TestRedis.uniquePrefix()));
		Limit daily = FixedWindow.ofCalendar("daily", 1, CalendarUnit.DAY, java.time.ZoneId.of("Asia/Tokyo"));
		// A midnight in Tokyo between the two calls would start a new day (Redis's clock is this machine's).
		WindowBoundaries.awayFromMidnight(java.time.ZoneId.of("Asia/Tokyo"), Duration.ofSeconds(10));
		assertThat(limiter.acquire(daily, "k").allowed()).isTrue();
		Decision second = limiter.acquire(daily, "k");
		assertThat(second.allowed()).isFalse();
		assertThat(second.retryAfter()).isLessThanOrEqualTo(Duration.ofDays(1)).isPositive();
	}

	@Test
	void scriptsReloadAfterScriptFlush() {
		String prefix = TestRedis.uniquePrefix();
		RateLimiter limiter = RateLimiter.of(backend(prefix));
		Limit limit = TokenBucket.of("flush", 3, Duration.ofMinutes(1));
		assertThat(limiter.acquire(limit, "k").allowed()).isTrue();
		redis.scriptFlush();
		assertThat(limiter.acquire(limit, "k").remaining()).isEqualTo(1);
		redis.scriptFlush();
		Decision async = limiter.decideAsync(List.of(LimitRequest.of(limit, "k")), Operation.ACQUIRE)
			.toCompletableFuture()
			.join();
		assertThat(async.remaining()).isZero();
	}

	@Test
	void asynchronousDecisionsMatchBlockingOnes() {
		RedisScriptBackend backend = backend(TestRedis.uniquePrefix());
		Limit limit = SlidingWindowLog.of("async", 3, Duration.ofMinutes(1));
		List<CompletionStage<Decision>> stages = new java.util.ArrayList<>();
		for (int i = 0; i < 5; i++) {
			stages.add(backend.decideAsync(List.of(LimitRequest.of(limit, "k")), Operation.ACQUIRE));
		}
		long admitted = stages.stream().map(stage -> stage.toCompletableFuture().join()).filter(Decision::allowed).count();
		assertThat(admitted).isEqualTo(3);
	}

	/**
	 * A factory that does not share its connection hands out one per call (from a pool, which may make the caller
	 * wait). The executor never waits for it on the calling thread: that thread may be Lettuce's event loop, which
	 * sends the next batch when a reply comes in, or the thread that fails the guard's calls past their deadline.
	 */
	@Test
	void aConnectionThatMustBeWaitedForIsNeverWaitedForOnTheCallingThread() {
		List<Thread> waited = new java.util.concurrent.CopyOnWriteArrayList<>();
		LettuceConnectionFactory unshared = new LettuceConnectionFactory(
				new RedisStandaloneConfiguration("127.0.0.1", TestRedis.standalone().port())) {

			@Override
			public org.springframework.data.redis.connection.RedisConnection getConnection() {
				waited.add(Thread.currentThread());
				return super.getConnection();
			}

		};
		unshared.setShareNativeConnection(false);
		unshared.afterPropertiesSet();
		unshared.start();
		try {
			RedisScriptBackend backend = SpringDataRedisScriptExecutor.backend(unshared, Runnable::run)
				.keyPrefix(TestRedis.uniquePrefix())
				.build();
			// Without boundaries: a fixed window would start afresh at a minute boundary of Redis's clock between the calls.
			Limit limit = SlidingWindowLog.of("unshared", 2, Duration.ofMinutes(1));
			for (int i = 0; i < 3; i++) {
				CompletionStage<Decision> decision = backend.decideAsync(List.of(LimitRequest.of(limit, "k")),
						Operation.ACQUIRE);
				assertThat(decision.toCompletableFuture().join().allowed()).isEqualTo(i < 2);
			}
			assertThat(waited).as("connections were taken").isNotEmpty().doesNotContain(Thread.currentThread());
		}
		finally {
			unshared.destroy();
		}
	}

	@Test
	void anUnreachableRedisFailsWithABackendException() {
		LettuceConnectionFactory nowhere = new LettuceConnectionFactory(
				new RedisStandaloneConfiguration("127.0.0.1", io.github.limiter.testsupport.RedisProcess.freePort()));
		nowhere.afterPropertiesSet();
		nowhere.start();
		try {
			RateLimiter limiter = RateLimiter.of(SpringDataRedisScriptExecutor.backend(nowhere, Runnable::run).build());
			org.assertj.core.api.Assertions
				.assertThatThrownBy(() -> limiter.acquire(FixedWindow.of("down", 1, Duration.ofMinutes(1)), "k"))
				.isInstanceOf(io.github.limiter.spi.BackendException.class);
		}
		finally {
			nowhere.destroy();
		}
	}


}
