package io.github.limiter.backend.redisson;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import org.redisson.api.RRateLimiter;
import org.redisson.api.RateLimiterConfig;
import org.redisson.api.RateType;
import org.redisson.api.RedissonClient;
import org.redisson.api.ratelimiter.RateLimiterArgs;

import io.github.limiter.Decision;
import io.github.limiter.Limit;
import io.github.limiter.LimitRequest;
import io.github.limiter.Operation;
import io.github.limiter.TimeSource;
import io.github.limiter.algorithm.TokenBucket;
import io.github.limiter.backend.redis.CompensatingDecision;
import io.github.limiter.backend.redis.DecisionUnit;
import io.github.limiter.backend.redis.KeyLayout;
import io.github.limiter.backend.redis.RedisScriptBackend;
import io.github.limiter.spi.BackendException;
import io.github.limiter.spi.InstanceRegistry;
import io.github.limiter.spi.LateAdmissions;
import io.github.limiter.spi.OverrideStore;
import io.github.limiter.spi.RateLimiterBackend;

/**
 * Redisson backend: every algorithm through the same Lua script as {@link RedisScriptBackend}, run with Redisson's
 * script API; in {@link TokenBucketMode#RATE_LIMITER} mode, token buckets through Redisson's {@link RRateLimiter}.
 *
 * <p>The default, {@link TokenBucketMode#SCRIPT}, decides a token bucket with the GCRA script in one call of four
 * commands (a plain {@code RRateLimiter.tryAcquire} costs ten), with exact remaining permits and retry-after and a
 * TTL on every key. {@link TokenBucketMode#RATE_LIMITER} is for applications that share their limiters with other
 * Redisson code; it avoids the traps of using {@code RRateLimiter} directly:
 * <ul>
 * <li>a rate changed in configuration takes effect: the first use of a key in this JVM compares the stored rate with
 * the configured one and updates it in place, keeping the permits already taken ({@code trySetRate} alone keeps the
 * old rate forever; {@code setRate} alone wipes the state on every start);</li>
 * <li>keys expire: every rate is set with a keep-alive time of one interval (at least a second, so that keys do not
 * expire between the calls of one decision), which Redisson renews on each acquire;
 * {@code availablePermits}, which writes its count without a TTL, is followed by an expiry of all the limiter's
 * keys, so that neither a fresh key nor a stale count outlives the keep-alive;</li>
 * <li>{@link Limit.Scope#PER_INSTANCE} maps to {@link RateType#PER_CLIENT}, {@link Limit.Scope#SHARED} to
 * {@link RateType#OVERALL}.</li>
 * </ul>
 * {@code RRateLimiter} sends the client's clock to its script, so instances whose clocks disagree share a limit
 * badly: one ahead admits beyond it and makes the others wait. The script mode reads the Redis time.
 * There, a {@link TokenBucket} of capacity {@code C} refilling {@code R} per {@code P} becomes "{@code C} permits per
 * {@code P·C/R}", Redisson's sliding-window view of the same long-run rate and burst, with that interval rounded to
 * whole milliseconds, as Redisson stores it (said once per limit when that changes the rate). {@code RRateLimiter} answers only
 * yes or no, so remaining permits take one more script (and the expiry a third) and retry-after is an upper bound
 * (one interval). {@code RRateLimiter} has no warm-up: a token bucket with a warm-up always goes through the script.
 */
public final class RedissonBackend implements RateLimiterBackend, InstanceRegistry, OverrideStore {

	private static final int MAX_CONFIGURED_KEYS = 100_000;

	private static final System.Logger logger = System.getLogger(RedissonBackend.class.getName());

	/** Whether the refusal to release an RRateLimiter's permits was said. */
	private static final java.util.concurrent.atomic.AtomicBoolean RELEASE_WARNED = new java.util.concurrent.atomic.AtomicBoolean();

	/** The limits whose rate Redisson rounds, said once each. */
	private static final Set<String> ROUNDING_WARNED = ConcurrentHashMap.newKeySet();

	private final RedissonClient redisson;

	private final RedisScriptBackend scripts;

	private final TokenBucketMode tokenBucketMode;

	/**
	 * The rate this JVM stored for each key it used lately: bounded in number and in time, so that a flood of keys
	 * leaves nothing behind once it is over.
	 */
	private final Cache<String, RateLimiterConfig> configured = Caffeine.newBuilder()
		.maximumSize(MAX_CONFIGURED_KEYS)
		.expireAfterAccess(Duration.ofMinutes(10))
		.build();

	/** Gives back what was admitted after its caller stopped waiting (what an {@code RRateLimiter} holds stays taken). */
	private final LateAdmissions late = new LateAdmissions(RedissonBackend.class, this::refundAsync);

	private RedissonBackend(Builder builder) {
		this.redisson = builder.redisson;
		this.tokenBucketMode = Objects.requireNonNull(builder.tokenBucketMode, "token bucket mode must not be null");
		this.scripts = builder.scripts.build();
	}

	/**
	 * Starts a builder.
	 * @param redisson the Redisson client
	 * @return a builder
	 */
	public static Builder builder(RedissonClient redisson) {
		return new Builder(Objects.requireNonNull(redisson, "redisson client must not be null"));
	}

	@Override
	public CompletionStage<Decision> decideAsync(List<LimitRequest> requests, Operation operation) {
		if (requests.isEmpty()) {
			throw new IllegalArgumentException("a decision needs at least one limit request");
		}
		List<Integer> scripted = new ArrayList<>(requests.size());
		List<DecisionUnit> units = new ArrayList<>(requests.size());
		for (int i = 0; i < requests.size(); i++) {
			if (usesRateLimiter(requests.get(i).limit())) {
				units.add(new RateLimiterUnit(requests.get(i), i));
			}
			else {
				scripted.add(i);
			}
		}
		if (units.isEmpty()) {
			return this.scripts.decideAsync(requests, operation);
		}
		if (!scripted.isEmpty()) {
			// Scripted limits first: they are refundable exactly, so a rejecting RRateLimiter costs nothing.
			units.addAll(0, this.scripts.units(requests, scripted));
		}
		// The caller holds a future of this backend's own: one that stopped waiting completes it, and an admission that
		// comes after that is given back here.
		CompletableFuture<Decision> answer = new CompletableFuture<>();
		CompensatingDecision.decide(units, requests.size(), operation)
			.whenComplete((decision, failure) -> this.late.deliver(answer, requests, operation, decision, failure));
		return answer;
	}

	@Override
	public CompletionStage<Void> refundAsync(List<LimitRequest> requests, Decision acquired) {
		List<Decision> parts = RateLimiterBackend.parts(requests, acquired);
		List<LimitRequest> scripted = new ArrayList<>(requests.size());
		List<Decision> scriptedParts = new ArrayList<>(requests.size());
		List<CompletableFuture<Void>> refunds = new ArrayList<>(2);
		for (int i = 0; i < requests.size(); i++) {
			LimitRequest request = requests.get(i);
			if (usesRateLimiter(request.limit())) {
				keptByRateLimiter(request);
			}
			else {
				scripted.add(request);
				scriptedParts.add(parts.get(i));
			}
		}
		if (!scripted.isEmpty()) {
			refunds.add(this.scripts.refund(scripted, scriptedParts).toCompletableFuture());
		}
		return CompletableFuture.allOf(refunds.toArray(CompletableFuture[]::new));
	}

	/** An RRateLimiter's permits are not given back (see {@link RateLimiterUnit#refund()}); said once. */
	private static void keptByRateLimiter(LimitRequest request) {
		if (RELEASE_WARNED.compareAndSet(false, true)) {
			logger.log(System.Logger.Level.WARNING, "Redisson RRateLimiter of limit '" + request.limit().name()
					+ "' cannot give permits back (its release would let them return twice): permits taken by a decision "
					+ "that is refunded, or by a call that counts only failures, stay taken until their interval passes; "
					+ "the SCRIPT token bucket mode gives them back. Said once.");
		}
	}

	@Override
	public CompletionStage<Void> resetAsync(Limit limit, String key) {
		if (!usesRateLimiter(limit)) {
			return this.scripts.resetAsync(limit, key);
		}
		RRateLimiter limiter = rateLimiter(LimitRequest.of(limit, key));
		this.configured.invalidate(limiter.getName());
		return limiter.deleteAsync().thenApply(deleted -> null);
	}

	@Override
	public CompletionStage<Integer> announce(String instance, Duration ttl) {
		return this.scripts.announce(instance, ttl);
	}

	@Override
	public CompletionStage<Void> withdraw(String instance) {
		return this.scripts.withdraw(instance);
	}

	@Override
	public CompletionStage<Map<String, Map<String, String>>> overrides() {
		return this.scripts.overrides();
	}

	@Override
	public CompletionStage<Map<String, Map<String, String>>> override(String limit, Map<String, String> settings) {
		return this.scripts.override(limit, settings);
	}

	private boolean usesRateLimiter(Limit limit) {
		return this.tokenBucketMode == TokenBucketMode.RATE_LIMITER && limit instanceof TokenBucket bucket
				&& bucket.warmup().isZero();
	}

	private RRateLimiter rateLimiter(LimitRequest request) {
		return this.redisson.getRateLimiter(this.scripts.layout().key(request, false, "rr"));
	}

	static RateLimiterConfig rateOf(TokenBucket bucket) {
		RateType type = (bucket.scope() == Limit.Scope.PER_INSTANCE) ? RateType.PER_CLIENT : RateType.OVERALL;
		return new RateLimiterConfig(type, intervalMillis(bucket), bucket.capacity());
	}

	/** The {@code RRateLimiter} interval of a bucket, {@code P·C/R}, in the whole milliseconds it is stored in. */
	private static long intervalMillis(TokenBucket bucket) {
		return Math.max(1, Math.round(exactIntervalMillis(bucket)));
	}

	private static double exactIntervalMillis(TokenBucket bucket) {
		return bucket.refillPeriod().toNanos() / 1e6 * bucket.capacity() / bucket.refillTokens();
	}

	/**
	 * Says once per limit when its rate is not what Redisson stores: an {@code RRateLimiter} counts its interval in
	 * whole milliseconds, so "1 per 1.25 ms" (800 per second) is stored as "1 per 1 ms" (1,000 per second).
	 */
	private void warnIfRounded(TokenBucket bucket) {
		double exact = exactIntervalMillis(bucket);
		long stored = intervalMillis(bucket);
		if (Math.abs(stored - exact) <= exact * 1e-9 || ROUNDING_WARNED.size() >= MAX_CONFIGURED_KEYS
				|| !ROUNDING_WARNED.add(bucket.name())) {
			return;
		}
		logger.log(System.Logger.Level.WARNING, "Redisson RRateLimiter of limit '" + bucket.name() + "' stores "
				+ bucket.capacity() + " permits per " + stored + " ms, not per " + exact + " ms as configured ("
				+ String.format(java.util.Locale.ROOT, "%.1f%%", 100.0 * exact / stored) + " of the configured rate): "
				+ "it counts its interval in whole milliseconds. Choose a capacity and rate whose interval, capacity / rate, "
				+ "is whole milliseconds, or the SCRIPT token bucket mode, which is exact. Said once per limit.");
	}

	/** A keep-alive of at least this: keys that expire between the three calls of a decision fail it. */
	private static final Duration MIN_KEEP_ALIVE = Duration.ofSeconds(1);

	private static Duration keepAlive(RateLimiterConfig rate) {
		Duration interval = Duration.ofMillis(rate.getRateInterval());
		return (interval.compareTo(MIN_KEEP_ALIVE) < 0) ? MIN_KEEP_ALIVE : interval;
	}

	/**
	 * Makes the stored rate of a key the configured one, once per key and JVM. A per-instance bucket whose rate this
	 * JVM used before also has its own count taken over to the new rate, even when another instance stored the rate
	 * first: Redisson's update in place recounts only the calling client's permits, and a count left from a higher
	 * rate would be spent in full under the lower one. (A key this JVM has not used has no count of this client's: a
	 * new JVM is a new client. One it forgot, unused for ten minutes or past the most keys it remembers, is not
	 * recounted.)
	 */
	private CompletionStage<Void> ensureRate(RRateLimiter limiter, RateLimiterConfig wanted) {
		String name = limiter.getName();
		RateLimiterConfig known = this.configured.getIfPresent(name);
		if (known != null && sameRate(known, wanted)) {
			return CompletableFuture.completedFuture(null);
		}
		boolean ownCountToRecount = known != null && wanted.getRateType() == RateType.PER_CLIENT;
		Duration interval = Duration.ofMillis(wanted.getRateInterval());
		Duration keepAlive = keepAlive(wanted);
		return limiter.trySetRateAsync(wanted.getRateType(), wanted.getRate(), interval, keepAlive)
			.thenCompose(created -> created ? CompletableFuture.completedFuture(null) : limiter.getConfigAsync()
				.thenCompose(stored -> (sameRate(stored, wanted) && !ownCountToRecount)
						? CompletableFuture.completedFuture(null)
						: limiter.setRateAsync(RateLimiterArgs.of(wanted.getRateType(), wanted.getRate(), interval)
							.keepAliveTime(keepAlive)
							.keepState(true))))
			.thenAccept(done -> this.configured.put(name, wanted));
	}

	private static boolean sameRate(RateLimiterConfig a, RateLimiterConfig b) {
		return a.getRateType() == b.getRateType() && Objects.equals(a.getRate(), b.getRate())
				&& Objects.equals(a.getRateInterval(), b.getRateInterval());
	}

	/** One token bucket on an {@link RRateLimiter}. */
	private final class RateLimiterUnit implements DecisionUnit {

		private final LimitRequest request;

		private final List<Integer> positions;

		private final RRateLimiter limiter;

		private final RateLimiterConfig rate;

		RateLimiterUnit(LimitRequest request, int position) {
			this.request = request;
			this.positions = List.of(position);
			this.limiter = rateLimiter(request);
			this.rate = rateOf((TokenBucket) request.limit());
			warnIfRounded((TokenBucket) request.limit());
		}

		@Override
		public List<Integer> positions() {
			return this.positions;
		}

		@Override
		public List<LimitRequest> requests() {
			return List.of(this.request);
		}

		/** What the last {@link #run} answered: the refund leaves the permits taken, so its answer stands. */
		private volatile List<Decision> answered;

		@Override
		public CompletionStage<List<Decision>> run(Operation operation) {
			return answer(operation, operation == Operation.CHECK)
				.thenApply(decisions -> this.answered = decisions);
		}

		/** A check's answer, except that a limit with room reports what it holds now, not what a call would leave. */
		@Override
		public CompletionStage<List<Decision>> untaken() {
			return answer(Operation.CHECK, false);
		}

		/**
		 * @param operation the operation
		 * @param asIfTaken whether an admitted check reports what would remain after the call, as the scripts do
		 */
		private CompletionStage<List<Decision>> answer(Operation operation, boolean asIfTaken) {
			CompletionStage<Boolean> verdict = verdict(operation).handle((allowed, failure) -> {
				if (failure == null) {
					return CompletableFuture.completedFuture(allowed);
				}
				if (!isNotInitialized(failure)) {
					return CompletableFuture.<Boolean>failedFuture(failure);
				}
				// The limiter expired while idle (its keep-alive), or Redis lost it: set the rate again, once.
				RedissonBackend.this.configured.invalidate(this.limiter.getName());
				return verdict(operation);
			}).thenCompose(stage -> stage);
			long cost = this.request.cost();
			Duration keepAlive = keepAlive(this.rate);
			return verdict.thenCompose(allowed -> this.limiter.availablePermitsAsync()
				// availablePermits writes its count without a TTL (on a fresh key, or when permits came back): expire
				// every key of the limiter again, or a check would leave keys for ever and stale counts behind.
				.thenCompose(available -> this.limiter.expireAsync(keepAlive).thenApply(expiring -> available))
				.thenApply(available -> {
					// Like the scripts, a check reports what would remain after the call.
					long remaining = (asIfTaken && allowed) ? available - cost : available;
					return List.of(decision(allowed, remaining));
				}))
				.handle((decisions, failure) -> {
					if (failure != null) {
						throw new BackendException("Redisson RRateLimiter " + this.limiter.getName() + " could not decide", failure);
					}
					return decisions;
				});
		}

		private CompletionStage<Boolean> verdict(Operation operation) {
			long cost = this.request.cost();
			return ensureRate(this.limiter, this.rate).thenCompose(ready -> switch (operation) {
				case ACQUIRE, SHADOW, RECORD -> this.limiter.tryAcquireAsync(cost);
				case CHECK -> this.limiter.availablePermitsAsync().thenApply(available -> available >= cost);
			});
		}

		private static boolean isNotInitialized(Throwable failure) {
			for (Throwable t = failure; t != null; t = (t.getCause() == t) ? null : t.getCause()) {
				if (t.getMessage() != null && t.getMessage().contains("RateLimiter is not initialized")) {
					return true;
				}
			}
			return false;
		}

		private Decision decision(boolean allowed, long available) {
			Limit limit = this.request.limit();
			long interval = this.rate.getRateInterval() * 1000;
			long resetAfter = (available >= limit.capacity()) ? 0 : interval;
			return Decision.of(limit.name(), allowed, limit.capacity(), available, allowed ? 0 : interval, resetAfter, 0,
					TimeSource.SYSTEM.nowMicros(), null);
		}

		/**
		 * Gives nothing back. {@code RRateLimiter.release} adds the permits to the available count but leaves the
		 * acquire's own entry, which gives them back a second time when it expires: a release would admit twice. The
		 * permits stay taken until the interval passes (stricter, never looser); said once.
		 */
		@Override
		public CompletionStage<List<Decision>> refund() {
			keptByRateLimiter(this.request);
			return CompletableFuture.completedFuture(this.answered);
		}

		@Override
		public String toString() {
			return "RRateLimiter " + this.limiter.getName();
		}

	}

	/**
	 * How the Redisson backend enforces {@link TokenBucket}s.
	 */
	public enum TokenBucketMode {

		/**
		 * Through Redisson's {@link RRateLimiter}, for limiters shared with other Redisson code. Buckets with a
		 * warm-up, which {@code RRateLimiter} cannot express, still go through the script.
		 */
		RATE_LIMITER,

		/**
		 * Through the GCRA script, like every other algorithm (the default): one call, exact remaining and
		 * retry-after, continuous refill, a TTL on every key.
		 */
		SCRIPT

	}

	/**
	 * Builder of {@link RedissonBackend}.
	 */
	public static final class Builder {

		private final RedissonClient redisson;

		/** What scripted limits are built with: the settings both backends share are set there, once. */
		private final RedisScriptBackend.Builder scripts;

		private TokenBucketMode tokenBucketMode = TokenBucketMode.SCRIPT;

		private Builder(RedissonClient redisson) {
			this.redisson = redisson;
			this.scripts = RedisScriptBackend.builder(new RedissonScriptExecutor(redisson));
		}

		/**
		 * Prefix of every key ({@code "limiter:"} by default).
		 * @param keyPrefix the prefix, without braces
		 * @return this builder
		 */
		public Builder keyPrefix(String keyPrefix) {
			this.scripts.keyPrefix(keyPrefix);
			return this;
		}

		/**
		 * How token buckets are enforced ({@link TokenBucketMode#SCRIPT} by default).
		 * @param mode the mode
		 * @return this builder
		 */
		public Builder tokenBucketMode(TokenBucketMode mode) {
			this.tokenBucketMode = mode;
			return this;
		}

		/**
		 * Whether scripted decisions in flight at once are sent together ({@code true} by default); see
		 * {@link RedisScriptBackend.Builder#coalesce(boolean)}.
		 * @param coalesce {@code false} to send every decision by itself
		 * @return this builder
		 */
		public Builder coalesce(boolean coalesce) {
			this.scripts.coalesce(coalesce);
			return this;
		}

		/**
		 * How many keys the denial cache of scripted limits remembers; 0 switches it off. See
		 * {@link RedisScriptBackend.Builder#denialCacheSize(int)}. {@code RRateLimiter} decisions are never cached:
		 * their retry time is an estimate.
		 * @param size the number of keys, or 0
		 * @return this builder
		 */
		public Builder denialCacheSize(int size) {
			this.scripts.denialCacheSize(size);
			return this;
		}

		/**
		 * For tests only: the time scripted limits see, instead of Redis {@code TIME}. {@code RRateLimiter} always
		 * uses Redisson's own clock.
		 * @param clock the clock
		 * @return this builder
		 */
		public Builder testClock(TimeSource clock) {
			this.scripts.testClock(clock);
			return this;
		}

		/**
		 * Builds the backend.
		 * @return the backend
		 */
		public RedissonBackend build() {
			return new RedissonBackend(this);
		}

	}

}
