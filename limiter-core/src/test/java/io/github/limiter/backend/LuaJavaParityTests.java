package io.github.limiter.backend;

import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Random;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
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
import io.github.limiter.backend.local.LocalBackend;
import io.github.limiter.backend.redis.spring.SpringDataRedisScriptExecutor;
import io.github.limiter.testsupport.ManualClock;
import io.github.limiter.testsupport.TestRedis;

import static org.assertj.core.api.Assertions.fail;

/**
 * Each algorithm is written twice, once in Java (the local backend, the guard's local shares) and once in Lua (every
 * Redis backend), and the two must be one specification: given the same calls at the same times, the same decisions,
 * to the microsecond. The contract tests check chosen cases; these check random ones. Each run plays seeded random
 * sequences on both backends on one clock: acquires, checks, records and refunds of any cost, decisions over two
 * limits at once, resets, waits bounded by a delay, clock steps from nothing to beyond a window and now and then
 * backwards; limits with uneven rates, odd windows, warm-ups and queues. Every answer is compared: allowed, remaining,
 * retry-after, reset-after, delay and the decision's time, limit by limit. A failure prints the seed and the calls
 * that led to it.
 */
class LuaJavaParityTests {

	private static final Instant T0 = Instant.parse("2026-06-15T10:00:00.123456Z");

	private static final int SEQUENCES = Integer.getInteger("parity.sequences", 40);

	/** Another set of sequences: {@code -Dparity.seed=N} explores further, the same way every time for one N. */
	private static final long SEED = Long.getLong("parity.seed", 0);

	private static final int STEPS = 80;

	private static LettuceConnectionFactory standalone;

	private static LettuceConnectionFactory cluster;

	@BeforeAll
	static void connect() {
		standalone = TestRedis.lettuce();
		cluster = TestRedis.lettuceCluster();
	}

	@AfterAll
	static void disconnect() {
		standalone.destroy();
		cluster.destroy();
	}

	@Test
	void fixedWindowsDecideAlikeInJavaAndLua() {
		playAll(1, (random, name) -> (random.nextInt(5) == 0)
				? FixedWindow.ofCalendar(name, 1 + random.nextInt(20), CalendarUnit.DAY, ZoneId.of("Asia/Kolkata"))
				: FixedWindow.of(name, 1 + random.nextInt(20), window(random)));
	}

	@Test
	void slidingWindowCountersDecideAlikeInJavaAndLua() {
		playAll(2, (random, name) -> SlidingWindowCounter.of(name, 1 + random.nextInt(20), window(random)));
	}

	@Test
	void slidingWindowLogsDecideAlikeInJavaAndLua() {
		playAll(3, (random, name) -> SlidingWindowLog.of(name, 1 + random.nextInt(12), window(random)));
	}

	@Test
	void tokenBucketsDecideAlikeInJavaAndLua() {
		playAll(4, (random, name) -> {
			TokenBucket bucket = TokenBucket.of(name, 1 + random.nextInt(20), 1 + random.nextInt(9), window(random));
			return (random.nextInt(3) == 0) ? bucket.withWarmup(window(random)) : bucket;
		});
	}

	@Test
	void leakyBucketsDecideAlikeInJavaAndLua() {
		playAll(5, (random, name) -> {
			long rate = 1 + random.nextInt(9);
			long burst = random.nextInt(8);
			return switch (random.nextInt(3)) {
				case 0 -> LeakyBucket.queueing(name, rate, window(random), burst);
				case 1 -> LeakyBucket.nodelay(name, rate, window(random), burst);
				default -> LeakyBucket.twoStage(name, rate, window(random), burst, random.nextInt((int) burst + 1));
			};
		});
	}

	/** Any algorithm, drawn anew for each of a sequence's two limits. */
	private static final LimitFactory ANY = (random, name) -> switch (random.nextInt(5)) {
		case 0 -> FixedWindow.of(name, 1 + random.nextInt(10), window(random));
		case 1 -> SlidingWindowCounter.of(name, 1 + random.nextInt(10), window(random));
		case 2 -> SlidingWindowLog.of(name, 1 + random.nextInt(10), window(random));
		case 3 -> TokenBucket.of(name, 1 + random.nextInt(10), 1 + random.nextInt(5), window(random));
		default -> LeakyBucket.twoStage(name, 1 + random.nextInt(5), window(random), 4, random.nextInt(5));
	};

	@Test
	void differentAlgorithmsDecidedTogetherAgreeInJavaAndLua() {
		playAll(6, ANY);
	}

	@Test
	void limitsOfLargeAndUnevenNumbersDecideAlikeInJavaAndLua() {
		playAll(7, (random, name) -> {
			while (true) {
				long count = large(random);
				Duration window = (random.nextBoolean()) ? window(random) : Duration.ofNanos(1_000L * (1 + large(random) % 4_000_000_000L));
				try {
					return switch (random.nextInt(5)) {
						case 0 -> FixedWindow.of(name, count, window);
						case 1 -> SlidingWindowCounter.of(name, count, window);
						case 2 -> TokenBucket.of(name, count, large(random), window);
						case 3 -> LeakyBucket.twoStage(name, large(random), window, count, count / 2);
						default -> TokenBucket.of(name, count, large(random), window).withWarmup(window(random));
					};
				}
				catch (IllegalArgumentException tooLargeToHoldExactly) {
					// Drawn again: the limit's own validation refuses numbers that cannot be held exactly.
				}
			}
		});
	}

	/**
	 * On a cluster, a decision over limits whose keys lie in different slots is made slot by slot, and the parts
	 * admitted are given back when another rejects: it must answer what a single script call answers.
	 */
	@Test
	void decisionsAcrossClusterSlotsAgreeWithJava() {
		// The clock never goes back here: a refund gives back only to the window it charged, and a clock that went
		// back behind a stored window charged that later window, which the refund, knowing only the time of the call,
		// cannot tell from a window that came since. Nothing is given back then, which can only under-admit.
		playAll(8, cluster, false, ANY);
	}

	/** From 1 to 10^15 (the largest count a limit accepts), evenly over the orders of magnitude, rarely round. */
	private static long large(Random random) {
		return 1 + (long) Math.pow(10, random.nextDouble() * 15) + random.nextInt(1000);
	}

	/**
	 * A window or period: whole seconds, whole milliseconds or odd microseconds, from a few microseconds to minutes.
	 */
	private static Duration window(Random random) {
		return switch (random.nextInt(4)) {
			case 0 -> Duration.ofSeconds(1 + random.nextInt(90));
			case 1 -> Duration.ofMillis(1 + random.nextInt(5000));
			case 2 -> Duration.ofNanos(1_000L * (1 + random.nextInt(2_000_000)));
			default -> Duration.ofNanos(1_000L * (1 + random.nextInt(50)));
		};
	}

	@FunctionalInterface
	private interface LimitFactory {

		Limit create(Random random, String name);

	}

	private static void playAll(int family, LimitFactory limits) {
		playAll(family, standalone, true, limits);
	}

	private static void playAll(int family, LettuceConnectionFactory redis, boolean backwards, LimitFactory limits) {
		for (int sequence = 0; sequence < SEQUENCES; sequence++) {
			new Sequence(SEED * 7_919_000_000L + family * 1_000_003L + sequence, redis, backwards, limits).play();
		}
	}

	/** One seeded sequence of calls, played on both backends at once and compared call by call. */
	private static final class Sequence {

		private final long seed;

		private final Random random;

		private final ManualClock clock = new ManualClock(T0);

		private final RateLimiter java = RateLimiter.of(LocalBackend.create(this.clock, 1000));

		private final RateLimiter lua;

		private final List<Limit> limits = new ArrayList<>();

		/** Admitted acquires that may be refunded: the requests, and each backend's decision. */
		private final List<Object[]> admitted = new ArrayList<>();

		/** The last calls, for the failure message. */
		private final Deque<String> history = new ArrayDeque<>();

		private long now;

		/** Whether the clock may step back. */
		private final boolean backwards;

		/** How far the clock may move in one step: a window, drawn as the limits' are. */
		private final long scaleMicros;

		Sequence(long seed, LettuceConnectionFactory redis, boolean backwards, LimitFactory factory) {
			this.backwards = backwards;
			this.lua = RateLimiter.of(SpringDataRedisScriptExecutor.backend(redis, Runnable::run)
				.keyPrefix(TestRedis.uniquePrefix())
				.testClock(this.clock)
				.coalesce(false)
				.denialCacheSize(0)
				.build());
			this.seed = seed;
			this.random = new Random(seed);
			this.now = this.clock.nowMicros();
			this.scaleMicros = window(this.random).toNanos() / 1_000;
			for (int i = 0; i < 2; i++) {
				this.limits.add(factory.create(this.random, "parity-" + seed + "-" + i));
			}
		}

		void play() {
			for (int step = 0; step < STEPS; step++) {
				advance();
				int pick = this.random.nextInt(100);
				String key = (this.random.nextInt(4) == 0) ? "b" : "a";
				Limit limit = this.limits.get(this.random.nextInt(2));
				if (pick < 40) {
					decide(List.of(request(limit, key)), Operation.ACQUIRE);
				}
				else if (pick < 52) {
					decide(List.of(request(limit, key)), Operation.CHECK);
				}
				else if (pick < 60) {
					decide(List.of(request(limit, key)), Operation.RECORD);
				}
				else if (pick < 70) {
					Limit other = this.limits.get(1 - this.limits.indexOf(limit));
					Operation operation = (this.random.nextInt(4) == 0) ? Operation.RECORD : Operation.ACQUIRE;
					decide(List.of(request(limit, key), request(other, this.random.nextBoolean() ? key : "c")), operation);
				}
				else if (pick < 78) {
					Duration maxDelay = Duration.ofNanos(1_000L * this.random.nextInt(3_000_000));
					decide(List.of(request(limit.withMaxDelay(maxDelay), key)), Operation.ACQUIRE);
				}
				else if (pick < 95) {
					refund();
				}
				else {
					log("reset " + limit.name() + " " + key);
					this.java.reset(limit, key);
					this.lua.reset(limit, key);
				}
			}
		}

		/** Moves the clock: not at all, by a little, by up to a window and a half, or back a little. */
		private void advance() {
			long step = switch (this.random.nextInt(10)) {
				case 0, 1, 2 -> 0;
				case 3, 4, 5 -> 1 + this.random.nextInt(2_000);
				case 6, 7 -> 1 + (long) (this.random.nextDouble() * 1.5 * this.scaleMicros);
				case 8 -> 1 + this.random.nextInt(100_000_000);
				default -> this.backwards ? -1 - this.random.nextInt(5_000) : 0;
			};
			this.now += step;
			this.clock.set(Instant.EPOCH.plusNanos(this.now * 1_000));
			if (step != 0) {
				log("at +" + (this.now - micros(T0)) + "us");
			}
		}

		/** Mostly one permit, sometimes a few, now and then any number up to the capacity. */
		private LimitRequest request(Limit limit, String key) {
			long cost = switch (this.random.nextInt(6)) {
				case 0 -> 1 + this.random.nextInt((int) Math.min(limit.capacity(), 4));
				case 1 -> 1 + (long) (this.random.nextDouble() * limit.capacity());
				default -> 1;
			};
			return new LimitRequest(limit, key, Math.min(cost, limit.capacity()));
		}

		private void decide(List<LimitRequest> requests, Operation operation) {
			log(operation + " " + describe(requests));
			Decision javaDecision = this.java.decide(requests, operation);
			Decision luaDecision = this.lua.decide(requests, operation);
			compare(javaDecision, luaDecision);
			if (operation == Operation.ACQUIRE && javaDecision.allowed()) {
				this.admitted.add(new Object[] { requests, javaDecision, luaDecision });
			}
		}

		@SuppressWarnings("unchecked")
		private void refund() {
			if (this.admitted.isEmpty()) {
				return;
			}
			Object[] acquired = this.admitted.remove(this.random.nextInt(this.admitted.size()));
			List<LimitRequest> requests = (List<LimitRequest>) acquired[0];
			log("refund " + describe(requests) + " charged at +" + (((Decision) acquired[1]).timeMicros() - micros(T0)) + "us");
			this.java.refund(requests, (Decision) acquired[1]);
			this.lua.refund(requests, (Decision) acquired[2]);
		}

		private void compare(Decision java, Decision lua) {
			String expected = fields(java);
			String actual = fields(lua);
			if (!expected.equals(actual)) {
				fail("Lua and Java disagree (seed " + this.seed + "; limits " + this.limits + ")\n  Java: " + expected
						+ "\n  Lua:  " + actual + "\nafter:\n  " + String.join("\n  ", this.history));
			}
		}

		private static String fields(Decision decision) {
			List<Decision> parts = decision.parts().isEmpty() ? List.of(decision) : decision.parts();
			StringBuilder out = new StringBuilder(decision.allowed() ? "allowed" : "rejected");
			for (Decision part : parts) {
				out.append(" [").append(part.limitName()).append(part.allowed() ? " allowed" : " rejected")
					.append(" remaining=").append(part.remaining())
					.append(" retry=").append(part.retryAfterMicros())
					.append(" reset=").append(part.resetAfterMicros())
					.append(" delay=").append(part.delayMicros())
					.append(" at=").append(part.timeMicros() - micros(T0)).append(']');
			}
			return out.toString();
		}

		private static String describe(List<LimitRequest> requests) {
			StringBuilder out = new StringBuilder();
			for (LimitRequest request : requests) {
				out.append(request.limit().name()).append('/').append(request.key()).append(" x").append(request.cost())
					.append(' ');
			}
			return out.toString().trim();
		}

		private void log(String line) {
			this.history.addLast(line);
			if (this.history.size() > 25) {
				this.history.removeFirst();
			}
		}

		private static long micros(Instant instant) {
			return instant.getEpochSecond() * 1_000_000L + instant.getNano() / 1_000;
		}

	}

}
