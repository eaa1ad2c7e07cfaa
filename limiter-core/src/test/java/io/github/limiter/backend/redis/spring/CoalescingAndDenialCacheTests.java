package io.github.limiter.backend.redis.spring;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import io.github.limiter.Decision;
import io.github.limiter.Limit;
import io.github.limiter.LimitRequest;
import io.github.limiter.Operation;
import io.github.limiter.RateLimiter;
import io.github.limiter.algorithm.FixedWindow;
import io.github.limiter.algorithm.SlidingWindowLog;
import io.github.limiter.algorithm.TokenBucket;
import io.github.limiter.backend.redis.LimiterScript;
import io.github.limiter.backend.redis.RedisScriptBackend;
import io.github.limiter.backend.redis.RedisScriptExecutor;
import io.github.limiter.spi.BackendException;
import io.github.limiter.testsupport.ManualClock;
import io.github.limiter.testsupport.TestRedis;
import io.github.limiter.testsupport.WindowBoundaries;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The two short roads of single-limit decisions on Redis: calls in flight at once on one key share a script call,
 * each still decided exactly; rejections are answered from memory until their retry time.
 *
 * <p>Decided on Redis's clock, the counts a test asserts are of limits without boundaries (sliding logs, buckets), or
 * of a fixed window with room left: an epoch-aligned fixed window starts afresh at its boundary.
 */
class CoalescingAndDenialCacheTests {

	private static LettuceConnectionFactory connectionFactory;

	@BeforeAll
	static void connect() {
		connectionFactory = TestRedis.lettuce();
	}

	@AfterAll
	static void disconnect() {
		connectionFactory.destroy();
	}

	@Test
	void decisionsInFlightTogetherOnOneKeyShareScriptCallsAndEachGetsItsOwnExactAnswer() {
		CountingExecutor redis = new CountingExecutor(new SpringDataRedisScriptExecutor(connectionFactory, Runnable::run));
		RateLimiter limiter = RateLimiter.of(RedisScriptBackend.builder(redis).keyPrefix(TestRedis.uniquePrefix())
			.denialCacheSize(0).build());
		Limit limit = TokenBucket.of("hot", 100, Duration.ofHours(1));
		redis.connect(limiter);

		List<CompletableFuture<Decision>> decisions = new ArrayList<>();
		redis.gate = new CompletableFuture<>();
		for (int i = 0; i < 256; i++) {
			decisions.add(limiter.acquireAsync(List.of(LimitRequest.of(limit, "k")), Duration.ZERO).toCompletableFuture());
		}
		redis.gate.complete(null);

		for (int i = 0; i < 256; i++) {
			Decision decision = decisions.get(i).join();
			if (i < 100) {
				assertThat(decision.allowed()).as("call %d", i).isTrue();
				assertThat(decision.remaining()).as("call %d", i).isEqualTo(99 - i);
			}
			else {
				assertThat(decision.allowed()).as("call %d", i).isFalse();
				assertThat(decision.retryAfter()).as("call %d", i).isBetween(Duration.ofSeconds(35), Duration.ofSeconds(36));
			}
		}
		// The connection's thread takes whatever waits each time it looks, up to the script calls the lane keeps in
		// flight; the rest, submitted while their answers were held back, follow in one batch.
		assertThat(redis.calls.get()).isBetween(1, RedisScriptBackend.MAX_IN_FLIGHT + 1);
	}

	@Test
	void severalScriptCallsGoOutAtOnceOnlyFromThreadsWhoseWritesQueueBehindEarlierOnes() throws Exception {
		CountingExecutor redis = new CountingExecutor(new SpringDataRedisScriptExecutor(connectionFactory, Runnable::run));
		RateLimiter limiter = RateLimiter.of(RedisScriptBackend.builder(redis).keyPrefix(TestRedis.uniquePrefix()).build());
		assertThat(redis.keepsOrder()).as("before the shared connection is in use").isFalse();
		redis.connect(limiter);

		// A Netty thread (Lettuce's event loop, with its default thread factory) writes at once what it sends.
		CompletableFuture<Boolean> onNettyThread = new CompletableFuture<>();
		Thread netty = new io.netty.util.concurrent.FastThreadLocalThread(() -> onNettyThread.complete(redis.keepsOrder()));
		netty.start();
		assertThat(onNettyThread.get(10, TimeUnit.SECONDS)).as("from a Netty thread").isFalse();
		assertThat(redis.keepsOrder()).as("from this thread").isTrue();
	}

	@Test
	void decisionsInFlightTogetherOnManyKeysShareScriptCallsAndEachGetsItsOwnExactAnswer() throws InterruptedException {
		// The window is aligned to the epoch, on Redis's clock (this machine's): an hour boundary between the calls would
		// start the addresses' counts afresh.
		WindowBoundaries.awayFromTheEndOfTheWindow(Duration.ofHours(1), Duration.ofSeconds(30));
		CountingExecutor redis = new CountingExecutor(new SpringDataRedisScriptExecutor(connectionFactory, Runnable::run));
		RateLimiter limiter = RateLimiter.of(RedisScriptBackend.builder(redis).keyPrefix(TestRedis.uniquePrefix())
			.denialCacheSize(0).build());
		Limit bucket = TokenBucket.of("user", 2, Duration.ofHours(1));
		Limit window = FixedWindow.of("ip", 3, Duration.ofHours(1));
		redis.connect(limiter);

		// 200 users, 3 calls each on their bucket of 2, interleaved with 100 calls on the windows of 25 addresses.
		List<CompletableFuture<Decision>> users = new ArrayList<>();
		List<CompletableFuture<Decision>> addresses = new ArrayList<>();
		List<String> addressKeys = new ArrayList<>();
		redis.gate = new CompletableFuture<>();
		for (int round = 0; round < 3; round++) {
			for (int user = 0; user < 200; user++) {
				users.add(limiter.acquireAsync(List.of(LimitRequest.of(bucket, "user-" + user)), Duration.ZERO)
					.toCompletableFuture());
				if (user % 6 == 0) {
					addressKeys.add("ip-" + (user % 25));
					addresses.add(limiter.acquireAsync(List.of(LimitRequest.of(window, "ip-" + (user % 25))),
							Duration.ZERO).toCompletableFuture());
				}
			}
		}
		redis.gate.complete(null);

		for (int i = 0; i < users.size(); i++) {
			Decision decision = users.get(i).join();
			int round = i / 200;
			assertThat(decision.allowed()).as("call %d of user %d", round + 1, i % 200).isEqualTo(round < 2);
			assertThat(decision.remaining()).as("call %d of user %d", round + 1, i % 200).isEqualTo(Math.max(0, 1 - round));
		}
		// Each address admits its first 3 calls in arrival order, whatever the batches they came in.
		Map<String, Integer> callsPerAddress = new HashMap<>();
		for (int i = 0; i < addresses.size(); i++) {
			int call = callsPerAddress.merge(addressKeys.get(i), 1, Integer::sum);
			assertThat(addresses.get(i).join().allowed()).as("call %d on %s", call, addressKeys.get(i)).isEqualTo(call <= 3);
		}
		// 702 calls: the first go alone, one per script call the lane keeps in flight, the rest in batches of at most 256.
		assertThat(redis.calls.get()).isLessThanOrEqualTo(RedisScriptBackend.MAX_IN_FLIGHT + 3);
	}

	@Test
	void coalescedSlidingLogDecisionsEachStoreTheirOwnToken() {
		RateLimiter limiter = RateLimiter.of(SpringDataRedisScriptExecutor.backend(connectionFactory, Runnable::run)
			.keyPrefix(TestRedis.uniquePrefix()).build());
		Limit limit = SlidingWindowLog.of("tokens", 5, Duration.ofMinutes(1));
		List<CompletableFuture<Decision>> decisions = new ArrayList<>();
		for (int i = 0; i < 8; i++) {
			decisions.add(limiter.acquireAsync(List.of(LimitRequest.of(limit, "k")), Duration.ZERO).toCompletableFuture());
		}
		List<String> tokens = decisions.stream().map(CompletableFuture::join).filter(Decision::allowed)
			.map(Decision::token).toList();
		assertThat(tokens).hasSize(5).doesNotContainNull().doesNotHaveDuplicates();
	}

	@Test
	void aRejectionIsAnsweredFromMemoryForUpToASecondThenRedisIsAskedAgain() {
		ManualClock clock = new ManualClock(Instant.parse("2026-11-21T10:00:00Z"));
		CountingExecutor redis = new CountingExecutor(new SpringDataRedisScriptExecutor(connectionFactory, Runnable::run));
		RateLimiter limiter = RateLimiter.of(RedisScriptBackend.builder(redis).keyPrefix(TestRedis.uniquePrefix())
			.testClock(clock).build());
		Limit limit = FixedWindow.of("flood", 3, Duration.ofMinutes(1));

		for (int i = 0; i < 3; i++) {
			assertThat(limiter.acquire(limit, "k").allowed()).isTrue();
		}
		Decision first = limiter.acquire(limit, "k");
		assertThat(first.allowed()).isFalse();
		assertThat(first.retryAfter()).isEqualTo(Duration.ofMinutes(1));
		assertThat(first.origin()).isEqualTo(Decision.Origin.BACKEND);
		assertThat(redis.calls.get()).isEqualTo(4);

		clock.advance(Duration.ofMillis(500));
		for (int i = 0; i < 1000; i++) {
			Decision cached = limiter.acquire(limit, "k");
			assertThat(cached.allowed()).isFalse();
			assertThat(cached.remaining()).isZero();
			assertThat(cached.retryAfter()).isEqualTo(Duration.ofMillis(59_500));
			assertThat(cached.origin()).as("Redis's verdict, repeated without asking it").isEqualTo(Decision.Origin.REMEMBERED);
		}
		assertThat(limiter.check(limit, "k").allowed()).isFalse();
		assertThat(redis.calls.get()).as("1001 rejections, no Redis call").isEqualTo(4);

		// Past a second, Redis answers again (a refund elsewhere could have made room), and is remembered again.
		clock.advance(Duration.ofMillis(600));
		assertThat(limiter.acquire(limit, "k").retryAfter()).isEqualTo(Duration.ofMillis(58_900));
		assertThat(limiter.acquire(limit, "k").allowed()).isFalse();
		assertThat(redis.calls.get()).isEqualTo(5);

		clock.set(Instant.parse("2026-11-21T10:01:00Z"));
		assertThat(limiter.acquire(limit, "k").allowed()).isTrue();
		assertThat(redis.calls.get()).isEqualTo(6);
	}

	@Test
	void aLimitBuiltForEachCallIsAnsweredFromTheSameMemory() {
		CountingExecutor redis = new CountingExecutor(new SpringDataRedisScriptExecutor(connectionFactory, Runnable::run));
		RateLimiter limiter = RateLimiter.of(RedisScriptBackend.builder(redis).keyPrefix(TestRedis.uniquePrefix()).build());
		for (int i = 0; i < 3; i++) {
			assertThat(limiter.acquire(SlidingWindowLog.of("per-call", 3, Duration.ofMinutes(1)), "k").allowed()).isTrue();
		}
		assertThat(limiter.acquire(SlidingWindowLog.of("per-call", 3, Duration.ofMinutes(1)), "k").allowed()).isFalse();
		for (int i = 0; i < 100; i++) {
			assertThat(limiter.acquire(SlidingWindowLog.of("per-call", 3, Duration.ofMinutes(1)), "k").allowed()).isFalse();
		}
		assertThat(redis.calls.get()).as("a limit is a value: its rejection is remembered for equal ones").isEqualTo(4);
	}

	@Test
	void aRejectionOnlyAnswersCallsOfTheSameCost() {
		CountingExecutor redis = new CountingExecutor(new SpringDataRedisScriptExecutor(connectionFactory, Runnable::run));
		RateLimiter limiter = RateLimiter.of(RedisScriptBackend.builder(redis).keyPrefix(TestRedis.uniquePrefix()).build());
		Limit limit = SlidingWindowLog.of("costly", 5, Duration.ofHours(1));

		assertThat(limiter.acquire(limit, "k", 4).allowed()).isTrue();
		assertThat(limiter.acquire(limit, "k", 3).allowed()).isFalse();
		assertThat(limiter.acquire(limit, "k", 3).allowed()).isFalse();
		assertThat(redis.calls.get()).as("the second rejection of cost 3 is answered from memory").isEqualTo(2);
		assertThat(limiter.acquire(limit, "k", 5).allowed()).isFalse();
		assertThat(redis.calls.get()).as("cost 5 asks Redis").isEqualTo(3);

		Decision one = limiter.acquire(limit, "k", 1);
		assertThat(one.allowed()).isTrue();
		assertThat(one.remaining()).isZero();
		assertThat(redis.calls.get()).isEqualTo(4);
	}

	@Test
	void anAcquireOfAnotherCostForgetsARejectionItWouldMakeStale() {
		CountingExecutor redis = new CountingExecutor(new SpringDataRedisScriptExecutor(connectionFactory, Runnable::run));
		RateLimiter limiter = RateLimiter.of(RedisScriptBackend.builder(redis).keyPrefix(TestRedis.uniquePrefix()).build());
		Limit limit = SlidingWindowLog.of("spent", 5, Duration.ofHours(1));

		assertThat(limiter.acquire(limit, "k", 3).allowed()).isTrue();
		Decision remembered = limiter.acquire(limit, "k", 3);
		assertThat(remembered.allowed()).isFalse();
		assertThat(remembered.remaining()).isEqualTo(2);
		assertThat(limiter.acquire(limit, "k", 1).allowed()).as("the cost of one still fits").isTrue();
		Decision again = limiter.acquire(limit, "k", 3);
		assertThat(again.allowed()).isFalse();
		assertThat(again.origin()).as("asked of Redis: the key consumed since the rejection was remembered")
			.isEqualTo(Decision.Origin.BACKEND);
		assertThat(again.remaining()).isEqualTo(1);
		assertThat(redis.calls.get()).isEqualTo(4);
	}

	@Test
	void aResetThroughThisInstanceForgetsTheRejection() {
		RateLimiter limiter = RateLimiter.of(SpringDataRedisScriptExecutor.backend(connectionFactory, Runnable::run)
			.keyPrefix(TestRedis.uniquePrefix()).build());
		Limit limit = SlidingWindowLog.of("reset", 1, Duration.ofHours(1));
		assertThat(limiter.acquire(limit, "k").allowed()).isTrue();
		assertThat(limiter.acquire(limit, "k").allowed()).isFalse();
		limiter.reset(limit, "k");
		assertThat(limiter.acquire(limit, "k").allowed()).isTrue();
	}

	@Test
	void aRejectionStillInFlightDuringAResetIsNotRemembered() {
		CountingExecutor redis = new CountingExecutor(new SpringDataRedisScriptExecutor(connectionFactory, Runnable::run));
		RateLimiter limiter = RateLimiter.of(RedisScriptBackend.builder(redis).keyPrefix(TestRedis.uniquePrefix()).build());
		Limit limit = SlidingWindowLog.of("reset-race", 1, Duration.ofHours(1));
		assertThat(limiter.acquire(limit, "k").allowed()).isTrue();

		redis.gate = new CompletableFuture<>();
		CompletableFuture<Decision> late = limiter.acquireAsync(List.of(LimitRequest.of(limit, "k")), Duration.ZERO)
			.toCompletableFuture();
		limiter.reset(limit, "k");
		redis.gate.complete(null);
		assertThat(late.join().allowed()).as("decided by Redis before the reset").isFalse();

		assertThat(limiter.acquire(limit, "k").allowed()).as("the reset emptied the key").isTrue();
	}

	@Test
	void decisionsTheDeadlineAnsweredAreNeverSentAfterwards() throws InterruptedException {
		CompletableFuture<List<Object>> stalled = new CompletableFuture<>();
		AtomicInteger sent = new AtomicInteger();
		RedisScriptExecutor frozen = new RedisScriptExecutor() {
			@Override
			public CompletionStage<List<Object>> execute(LimiterScript script, List<String> keys, List<String> args) {
				if (script != LimiterScript.instances()) {
					sent.incrementAndGet();
				}
				return stalled;
			}

			@Override
			public boolean isCluster() {
				return false;
			}
		};
		RateLimiter limiter = RateLimiter.of(io.github.limiter.guard.GuardedBackend
			.builder(RedisScriptBackend.builder(frozen).build())
			.deadline(Duration.ofMillis(50))
			.build());
		Limit limit = FixedWindow.of("frozen", 10, Duration.ofMinutes(1));
		List<CompletableFuture<Decision>> decisions = new ArrayList<>();
		for (int i = 0; i < 20; i++) {
			decisions.add(limiter.acquireAsync(List.of(LimitRequest.of(limit, "k")), Duration.ZERO).toCompletableFuture());
		}
		// Not known to be down yet (the probe has not failed): the local policy rejects rather than risk a second
		// admission next to Redis's own.
		assertThat(decisions).allSatisfy(decision -> assertThat(decision.join().origin())
			.isEqualTo(Decision.Origin.UNDECIDED));

		// A batch in flight holds its lane only while one of its callers waits: a call whose caller still waited when
		// the one before was given up may have gone out; the calls given up while queued were dropped. (The lane hands
		// a call taken while its caller waited to another thread, which may send it just after that caller gave up:
		// counted once the count stops moving.)
		int sentWhileWaiting = settled(sent);
		assertThat(sentWhileWaiting).as("calls given up while queued behind a stalled one are not sent").isLessThan(20);
		stalled.completeExceptionally(new IllegalStateException("Redis came back too late"));
		Thread.sleep(200);
		assertThat(sent.get()).as("nothing is sent once every caller has gone").isEqualTo(sentWhileWaiting);
	}

	/** The count once it has not moved for 200 ms (at most 10 s). */
	private static int settled(AtomicInteger count) throws InterruptedException {
		long giveUp = System.nanoTime() + 10_000_000_000L;
		int seen = count.get();
		while (System.nanoTime() < giveUp) {
			Thread.sleep(200);
			int now = count.get();
			if (now == seen) {
				return now;
			}
			seen = now;
		}
		return seen;
	}

	@Test
	void withTheCacheSwitchedOffEveryRejectionGoesToRedis() {
		CountingExecutor redis = new CountingExecutor(new SpringDataRedisScriptExecutor(connectionFactory, Runnable::run));
		RateLimiter limiter = RateLimiter.of(RedisScriptBackend.builder(redis).keyPrefix(TestRedis.uniquePrefix())
			.denialCacheSize(0).coalesce(false).build());
		Limit limit = FixedWindow.of("uncached", 1, Duration.ofHours(1));
		for (int i = 0; i < 10; i++) {
			limiter.acquire(limit, "k");
		}
		assertThat(redis.calls.get()).isEqualTo(10);
	}

	@Test
	void aConnectionWhoseRedisDoesNotAnswerHoldsABoundedQueueAndFailsTheRestAtOnce() throws Exception {
		CompletableFuture<List<Object>> never = new CompletableFuture<>();
		RedisScriptExecutor stalled = new RedisScriptExecutor() {
			@Override
			public CompletionStage<List<Object>> execute(LimiterScript script, List<String> keys, List<String> args) {
				return never;
			}

			@Override
			public boolean isCluster() {
				return false;
			}

			@Override
			public boolean keepsOrder() {
				return true;
			}
		};
		RedisScriptBackend backend = RedisScriptBackend.builder(stalled).build();
		Limit limit = FixedWindow.of("stalled", 10, Duration.ofSeconds(1));
		List<CompletableFuture<Decision>> waiting = new ArrayList<>();
		// Sent, one per script call a lane keeps in flight, then 4,096 waiting.
		for (int i = 0; i < RedisScriptBackend.MAX_IN_FLIGHT + 4096; i++) {
			waiting.add(backend.decideAsync(List.of(LimitRequest.of(limit, "k")), Operation.ACQUIRE).toCompletableFuture());
		}
		assertThat(waiting).allSatisfy(decision -> assertThat(decision).isNotDone());
		CompletableFuture<Decision> overflow = backend.decideAsync(List.of(LimitRequest.of(limit, "k")), Operation.ACQUIRE)
			.toCompletableFuture();
		assertThatThrownBy(() -> overflow.get(1, TimeUnit.SECONDS)).hasCauseInstanceOf(BackendException.class)
			.hasMessageContaining("4096 decisions are already waiting");

		never.completeExceptionally(new IllegalStateException("connection closed"));
		assertThat(waiting).allSatisfy(decision -> assertThat(decision).isCompletedExceptionally());
	}

	/** Counts script calls on their way to Redis, and holds their answers back until its gate opens. */
	private static final class CountingExecutor implements RedisScriptExecutor {

		final AtomicInteger calls = new AtomicInteger();

		volatile CompletableFuture<Void> gate = CompletableFuture.completedFuture(null);

		private final RedisScriptExecutor delegate;

		CountingExecutor(RedisScriptExecutor delegate) {
			this.delegate = delegate;
		}

		@Override
		public CompletionStage<List<Object>> execute(LimiterScript script, List<String> keys, List<String> args) {
			this.calls.incrementAndGet();
			CompletionStage<List<Object>> reply = this.delegate.execute(script, keys, args);
			// Only the answers to decisions wait at the gate: resets (operation 'x') go through.
			return args.contains("x") ? reply : reply.thenCombine(this.gate, (answer, open) -> answer);
		}

		@Override
		public boolean isCluster() {
			return this.delegate.isCluster();
		}

		@Override
		public boolean keepsOrder() {
			return this.delegate.keepsOrder();
		}

		@Override
		public Executor connectionThread() {
			return this.delegate.connectionThread();
		}

		/** Decides once, so that the shared connection is open and calls go out in order, several at once. */
		void connect(RateLimiter limiter) {
			limiter.acquire(FixedWindow.of("connect", 1, Duration.ofSeconds(1)), "connect");
			assertThat(keepsOrder()).as("pipelined on the shared connection").isTrue();
			this.calls.set(0);
		}

	}

}
