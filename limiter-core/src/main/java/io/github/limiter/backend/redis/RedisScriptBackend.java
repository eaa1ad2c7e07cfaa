package io.github.limiter.backend.redis;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import java.util.regex.Pattern;

import io.github.limiter.Decision;
import io.github.limiter.Limit;
import io.github.limiter.LimitRequest;
import io.github.limiter.Operation;
import io.github.limiter.TimeSource;
import io.github.limiter.algorithm.Algorithm;
import io.github.limiter.spi.BackendException;
import io.github.limiter.spi.BlockingCalls;
import io.github.limiter.spi.InstanceIdentity;
import io.github.limiter.spi.InstanceRegistry;
import io.github.limiter.spi.LateAdmissions;
import io.github.limiter.spi.OverrideStore;
import io.github.limiter.spi.RateLimiterBackend;

/**
 * Redis backend: every decision is one {@code EVALSHA} of a {@link LimiterScript}, on any client that has a
 * {@link RedisScriptExecutor}.
 *
 * <p>The script reads the time with {@code TIME}, so every instance of the application agrees on it whatever their
 * clocks; it gives every key it writes a TTL, so idle keys vanish. Limits whose keys share a hash tag (on a
 * standalone Redis: all of them) are decided in one script call; on a Redis Cluster, limits in different slots are
 * decided by {@link CompensatingDecision}.
 *
 * <p>A decision on a single limit (the common case) takes a shorter road: a rejection this JVM saw and whose retry
 * time has not come is answered from the {@link DenialCache} without Redis, and calls in flight at once on one
 * connection (one cluster slot) are decided together by one script call ({@link SlotLanes}), on whatever keys, each
 * exactly as if it had come alone. Both can be switched off on the {@link Builder}.
 */
public class RedisScriptBackend implements RateLimiterBackend, InstanceRegistry, OverrideStore {

	/** Keys the denial cache remembers by default. */
	public static final int DEFAULT_DENIAL_CACHE_SIZE = 100_000;

	/** At most this many decisions go in one coalesced script call. */
	static final int MAX_BATCH = 256;

	/**
	 * Script calls in flight per lane. With one, a call that found the lane busy waited a whole round trip while
	 * Redis sat idle: 8 callers on 10,000 keys made about 51,000 decisions per second with one and 67,000 with four
	 * (docs/benchmarks.md, "Four script calls in flight per connection"); beyond the first, while the batches in
	 * flight hold fewer than {@link SlotLanes#MAX_CALLS_IN_FLIGHT} calls. Only when batches are sent from the client's
	 * own writing thread ({@link RedisScriptExecutor#connectionThread()}), or the calling thread sends to a client that
	 * keeps the order of what it is sent ({@link RedisScriptExecutor#keepsOrder()}); one otherwise, and one for a batch
	 * a caller-sending lane sends on a reply (see {@link SlotLanes}).
	 */
	public static final int MAX_IN_FLIGHT = 4;

	/** At most this many decisions wait for one lane. */
	static final int MAX_WAITING = 4096;

	private final RedisScriptExecutor executor;

	private final KeyLayout layout;

	private final TimeSource testClock;

	/** {@code null} when switched off. */
	private final DenialCache denials;

	/** {@code null} when switched off. */
	private final SlotLanes lanes;

	/** Gives back what Redis admitted after its caller stopped waiting. */
	private final LateAdmissions late = new LateAdmissions(RedisScriptBackend.class, this::refundAsync);

	/** The clock of the denial cache: the test clock, or a monotonic one. */
	private final TimeSource cacheClock;

	/**
	 * Creates a backend.
	 * @param executor the client adapter
	 * @param layout the key layout
	 * @param testClock {@code null} in production, so the time comes from Redis; a clock only to run specifications
	 * at chosen instants
	 */
	protected RedisScriptBackend(RedisScriptExecutor executor, KeyLayout layout, TimeSource testClock) {
		this(executor, layout, testClock, DEFAULT_DENIAL_CACHE_SIZE, true);
	}

	private RedisScriptBackend(RedisScriptExecutor executor, KeyLayout layout, TimeSource testClock, int denialCacheSize,
			boolean coalesce) {
		this.executor = Objects.requireNonNull(executor, "executor must not be null");
		this.layout = Objects.requireNonNull(layout, "layout must not be null");
		this.testClock = testClock;
		this.denials = (denialCacheSize > 0) ? new DenialCache(denialCacheSize) : null;
		// A blocking client (Jedis) waits on its own connection per caller: nothing to coalesce, and a caller's thread
		// must not end up sending other callers' batches.
		this.lanes = (coalesce && !executor.blocksCaller()) ? new SlotLanes(this::sendBatch,
				executor.isCluster() ? KeyLayout::slot : key -> 0, MAX_BATCH, MAX_WAITING,
				() -> executor.keepsOrder() ? MAX_IN_FLIGHT : 1,
				(call, decision) -> this.late.giveBack(List.of(call.request()), decision), executor::connectionThread,
				MAX_IN_FLIGHT) : null;
		this.cacheClock = (testClock != null) ? testClock : () -> System.nanoTime() / 1000;
	}

	/**
	 * Starts a builder.
	 * @param executor the client adapter
	 * @return a builder
	 */
	public static Builder builder(RedisScriptExecutor executor) {
		return new Builder(executor);
	}

	/**
	 * The key layout.
	 * @return the layout
	 */
	public KeyLayout layout() {
		return this.layout;
	}

	@Override
	public CompletionStage<Decision> decideAsync(List<LimitRequest> requests, Operation operation) {
		if (requests.isEmpty()) {
			throw new IllegalArgumentException("a decision needs at least one limit request");
		}
		if (requests.size() == 1 && operation != Operation.RECORD) {
			return decideOne(requests.get(0), operation);
		}
		List<Integer> positions = new ArrayList<>(requests.size());
		for (int i = 0; i < requests.size(); i++) {
			positions.add(i);
		}
		// A rejection remembered for one of these keys may have been decided before this decision consumed more (a
		// record, or several limits at once): it would tell too short a retry time.
		if (this.denials != null) {
			requests.forEach(request -> this.denials.forget(this.layout.key(request)));
		}
		CompletableFuture<Decision> answer = new CompletableFuture<>();
		CompensatingDecision.decide(units(requests, positions), requests.size(), operation)
			.whenComplete((decision, failure) -> this.late.deliver(answer, requests, operation, decision, failure));
		return answer;
	}

	private CompletionStage<Decision> decideOne(LimitRequest request, Operation operation) {
		String key = this.layout.key(request);
		long sent = 0;
		long generation = 0;
		if (this.denials != null) {
			sent = this.cacheClock.nowMicros();
			generation = this.denials.generation();
			Decision known = this.denials.lookup(key, request.limit(), request.cost(), sent, operation.acquires());
			if (known != null) {
				return CompletableFuture.completedFuture(known);
			}
		}
		// The caller holds the very future the lane (or deliver) completes: a caller that gives up (the guard's
		// deadline) completes it, so a call still waiting is never sent and an admission that comes after is given
		// back there. A rejection is remembered before the future completes, so that the caller's next call already
		// finds it.
		CompletableFuture<Decision> answer = (this.denials == null) ? new CompletableFuture<>()
				: new RememberedRejection(key, request, sent, generation);
		if (this.lanes != null) {
			this.lanes.submit(new SlotLanes.Call(key, request, operation, answer));
		}
		else {
			sendBatch(List.of(new SlotLanes.Call(key, request, operation, answer)))
				.whenComplete((decisions, failure) -> this.late.deliver(answer, List.of(request), operation,
						(failure == null) ? decisions.get(0) : null, failure));
		}
		return answer;
	}

	/** A caller's future that tells the denial cache of a rejection before anyone learns it. */
	private final class RememberedRejection extends CompletableFuture<Decision> {

		private final String key;

		private final LimitRequest request;

		private final long sentMicros;

		private final long generation;

		RememberedRejection(String key, LimitRequest request, long sentMicros, long generation) {
			this.key = key;
			this.request = request;
			this.sentMicros = sentMicros;
			this.generation = generation;
		}

		@Override
		public boolean complete(Decision decision) {
			if (!decision.allowed()) {
				RedisScriptBackend.this.denials.remember(this.key, this.request.limit(), this.request.cost(), decision,
						this.sentMicros, this.generation);
			}
			return super.complete(decision);
		}

	}

	/**
	 * Keeps the denial cache right around a call that gives permits back (a reset or a refund): the keys are forgotten
	 * before it is sent, and again once it is done, so that no rejection decided before it stays behind.
	 */
	private <T> CompletionStage<T> improving(List<String> keys, Supplier<CompletionStage<T>> call) {
		if (this.denials == null) {
			return call.get();
		}
		keys.forEach(this.denials::forget);
		return call.get().whenComplete((done, failure) -> keys.forEach(this.denials::forget));
	}

	/**
	 * Decides calls on keys of one slot, in order, with one script call. While the slot moves between masters, a call
	 * over several keys is refused with {@code TRYAGAIN} as long as some of its keys have moved and others not, which
	 * for a slot of many keys lasts as long as the move; a call over one key is redirected instead. So a batch of
	 * several keys refused that way is not sent again whole: each key's calls are sent on their own, in their order.
	 */
	private CompletionStage<List<Decision>> sendBatch(List<SlotLanes.Call> calls) {
		// Only a cluster's slots move; elsewhere a batch takes no further stage.
		if (!this.executor.isCluster() || oneKey(calls)) {
			return decideInOrder(calls, true);
		}
		return decideInOrder(calls, false).exceptionallyCompose(failure -> {
			if (!tryAgain(failure)) {
				return CompletableFuture.failedFuture(failure);
			}
			Map<String, List<Integer>> byKey = new LinkedHashMap<>();
			for (int i = 0; i < calls.size(); i++) {
				byKey.computeIfAbsent(calls.get(i).key(), key -> new ArrayList<>(1)).add(i);
			}
			return keyByKey(calls, byKey.values());
		});
	}

	private static boolean oneKey(List<SlotLanes.Call> calls) {
		String first = calls.get(0).key();
		for (int i = 1; i < calls.size(); i++) {
			if (!calls.get(i).key().equals(first)) {
				return false;
			}
		}
		return true;
	}

	/** Each key's calls as a script call of their own, answered in the batch's order once all are answered. */
	private CompletionStage<List<Decision>> keyByKey(List<SlotLanes.Call> calls, Collection<List<Integer>> groups) {
		Decision[] decisions = new Decision[calls.size()];
		List<CompletableFuture<Void>> parts = new ArrayList<>(groups.size());
		for (List<Integer> group : groups) {
			List<SlotLanes.Call> own = new ArrayList<>(group.size());
			group.forEach(i -> own.add(calls.get(i)));
			parts.add(decideInOrder(own, true).thenAccept(answers -> {
				for (int i = 0; i < answers.size(); i++) {
					decisions[group.get(i)] = answers.get(i);
				}
			}).toCompletableFuture());
		}
		return CompletableFuture.allOf(parts.toArray(CompletableFuture[]::new)).handle((done, failure) -> {
			if (failure == null) {
				return Arrays.asList(decisions);
			}
			// The batch fails as a whole, so the permits that the keys answered took are given back.
			for (int i = 0; i < decisions.length; i++) {
				if (decisions[i] != null && calls.get(i).operation().acquires()) {
					this.late.giveBack(List.of(calls.get(i).request()), decisions[i]);
				}
			}
			throw (failure instanceof CompletionException) ? (CompletionException) failure
					: new CompletionException(failure);
		});
	}

	/** One script call for the calls, sent again on {@code TRYAGAIN} or a redirection only if {@code retry}. */
	private CompletionStage<List<Decision>> decideInOrder(List<SlotLanes.Call> calls, boolean retry) {
		ScriptCall script = new ScriptCall(argumentTime(), clientTime());
		for (SlotLanes.Call call : calls) {
			boolean acquires = call.operation().acquires();
			boolean log = call.request().limit().algorithm() == Algorithm.SLIDING_WINDOW_LOG;
			script.decide(acquires ? "a" : "c", (log && acquires) ? InstanceIdentity.nextToken() : "", call.request(),
					call.key());
		}
		return execute(script.script(), script.keys(), script.arguments(), script, retry ? 0 : TRY_AGAIN_TIMES)
			.thenApply(reply -> {
				List<List<Decision>> answers = script.decode(reply);
				List<Decision> decisions = new ArrayList<>(answers.size());
				for (List<Decision> answer : answers) {
					decisions.add(answer.get(0));
				}
				return decisions;
			});
	}

	private CompletionStage<List<Object>> execute(ScriptCall call) {
		return execute(call.script(), call.keys(), call.arguments(), call);
	}

	private CompletionStage<List<Object>> execute(LimiterScript script, List<String> keys, List<String> args,
			Object what) {
		return execute(script, keys, args, what, 0);
	}

	/**
	 * A script call on keys of a Redis Cluster slot that is moving between masters is refused with {@code TRYAGAIN}
	 * while some of its keys have moved and others not, or comes back with a redirection the client did not follow;
	 * Redis runs nothing then, so the call is sent again, every {@value #TRY_AGAIN_MILLIS} ms, {@value #TRY_AGAIN_TIMES}
	 * times at most (the guard's deadline bounds the wait a caller sees). A decision over one key never meets
	 * {@code TRYAGAIN}; a decision over several limits may, and a batch of several keys is sent again key by key
	 * instead ({@link #sendBatch}).
	 */
	private CompletionStage<List<Object>> execute(LimiterScript script, List<String> keys, List<String> args,
			Object what, int tried) {
		CompletionStage<List<Object>> reply;
		try {
			reply = this.executor.execute(script, keys, args);
		}
		catch (RuntimeException ex) {
			reply = CompletableFuture.failedFuture(ex);
		}
		// A reply passes through untouched: only a failure takes a further stage.
		return reply.exceptionallyCompose(failure -> {
			Throwable cause = (failure instanceof CompletionException && failure.getCause() != null)
					? failure.getCause() : failure;
			this.executor.failed(cause);
			if (tried < TRY_AGAIN_TIMES && tryAgain(cause)) {
				return CompletableFuture.supplyAsync(() -> execute(script, keys, args, what, tried + 1),
						CompletableFuture.delayedExecutor(TRY_AGAIN_MILLIS, TimeUnit.MILLISECONDS, TRY_AGAIN_CALLS))
					.thenCompose(stage -> stage);
			}
			if (cause instanceof BackendException backend) {
				throw backend;
			}
			throw new BackendException("Redis could not decide " + what + ": " + cause.getMessage(), cause);
		});
	}

	private static final int TRY_AGAIN_TIMES = 20;

	/** Where a call refused with {@code TRYAGAIN} is sent again: bounded, as a blocking client's call may block there. */
	private static final ExecutorService TRY_AGAIN_CALLS = BlockingCalls.pool("limiter-tryagain");

	private static final long TRY_AGAIN_MILLIS = 25;

	/**
	 * Whether Redis refused the call without running it, so that sending it again is safe: {@code TRYAGAIN} (a call
	 * over keys of a slot that is half moved), or a {@code MOVED} or {@code ASK} redirection that the client did not
	 * follow itself (Lettuce can let another command in between its {@code ASKING} and the redirected call).
	 */
	static boolean tryAgain(Throwable failure) {
		return ClientErrors.any(failure, cause -> ClientErrors.replyStartsWith(cause, "TRYAGAIN ")
				|| (cause.getMessage() != null && REDIRECTED.matcher(cause.getMessage()).lookingAt()));
	}

	/** A redirection as Redis words it: {@code MOVED 7 127.0.0.1:7200}, {@code ASK 7 ...}. */
	private static final Pattern REDIRECTED = Pattern.compile("(MOVED|ASK) [0-9]+ \\S+:[0-9]+");

	@Override
	public CompletionStage<Integer> announce(String instance, Duration ttl) {
		return instances(instance, Math.max(1, ttl.toMillis()));
	}

	@Override
	public CompletionStage<Void> withdraw(String instance) {
		return instances(instance, 0).thenApply(count -> null);
	}

	/** The set of instances alive under this prefix: one key, next to the limits' keys. */
	private CompletionStage<Integer> instances(String instance, long ttlMillis) {
		String key = this.layout.prefix() + "instances";
		return execute(LimiterScript.instances(), List.of(key), List.of("", instance, Long.toString(ttlMillis)), key)
			.thenApply(reply -> {
				if (reply == null || reply.size() != 1) {
					throw new BackendException("unexpected reply from the instances script on " + key + ": " + reply, null);
				}
				return (int) ScriptCall.number(reply.get(0));
			});
	}

	@Override
	public CompletionStage<Map<String, Map<String, String>>> overrides() {
		return overrides("", "");
	}

	@Override
	public CompletionStage<Map<String, Map<String, String>>> override(String limit, Map<String, String> settings) {
		if (limit == null || limit.isEmpty()) {
			throw new IllegalArgumentException("the limit's name must not be empty");
		}
		StringBuilder text = new StringBuilder();
		new TreeMap<>(settings).forEach((name, value) -> {
			if (name.contains("=") || name.contains("\n") || value.contains("\n")) {
				throw new IllegalArgumentException("setting " + name + " = '" + value + "' cannot be stored: names hold no"
						+ " '=' and neither names nor values line breaks");
			}
			text.append(name).append('=').append(value).append('\n');
		});
		return overrides(limit, text.toString());
	}

	/** The overrides of every limit, in one hash next to the limits' keys; changes one limit's first, if given. */
	private CompletionStage<Map<String, Map<String, String>>> overrides(String limit, String settings) {
		String key = this.layout.prefix() + "overrides";
		return execute(LimiterScript.overrides(), List.of(key), List.of("", limit, settings), key).thenApply(reply -> {
			Map<String, Map<String, String>> overrides = new TreeMap<>();
			for (int i = 0; reply != null && i + 1 < reply.size(); i += 2) {
				Map<String, String> values = new TreeMap<>();
				for (String line : text(reply.get(i + 1)).split("\n")) {
					int equals = line.indexOf('=');
					if (equals > 0) {
						values.put(line.substring(0, equals), line.substring(equals + 1));
					}
				}
				overrides.put(text(reply.get(i)), Collections.unmodifiableMap(values));
			}
			return Collections.unmodifiableMap(overrides);
		});
	}

	private static String text(Object value) {
		return (value instanceof byte[] bytes) ? new String(bytes, StandardCharsets.UTF_8) : String.valueOf(value);
	}

	@Override
	public boolean blocksCaller() {
		return this.executor.blocksCaller();
	}

	@Override
	public CompletionStage<Void> resetAsync(Limit limit, String key) {
		LimitRequest request = LimitRequest.of(limit, key);
		ScriptUnit unit = new ScriptUnit(List.of(request), List.of(0), argumentTime(), "");
		return improving(unit.keys, () -> execute(unit.call("x")).<Void>thenApply(reply -> null));
	}

	@Override
	public CompletionStage<Void> refundAsync(List<LimitRequest> requests, Decision acquired) {
		return refund(requests, RateLimiterBackend.parts(requests, acquired));
	}

	/**
	 * Gives back what each request took, one script call per cluster slot (the requests of one slot were decided by
	 * one script call, at one Redis time, under one token).
	 * @param requests the requests
	 * @param parts what each took: its decision, whose time and token the script's refund reads
	 * @return completes when the permits are back
	 */
	public CompletionStage<Void> refund(List<LimitRequest> requests, List<Decision> parts) {
		String token = "";
		List<Integer> positions = new ArrayList<>(requests.size());
		for (int i = 0; i < requests.size(); i++) {
			positions.add(i);
			if (parts.get(i).token() != null) {
				token = parts.get(i).token();
			}
		}
		List<CompletableFuture<?>> refunds = new ArrayList<>();
		for (ScriptUnit unit : units(requests, positions, token)) {
			List<Decision> charged = new ArrayList<>(unit.positions().size());
			for (int position : unit.positions()) {
				charged.add(parts.get(position));
			}
			refunds.add(unit.refund(charged).toCompletableFuture());
		}
		return CompletableFuture.allOf(refunds.toArray(CompletableFuture[]::new));
	}

	/**
	 * Splits requests into units that one script call can decide: one unit, unless the keys span several cluster
	 * slots.
	 * @param requests the requests of a decision
	 * @param positions the positions of the requests to cover
	 * @return the units
	 */
	public List<DecisionUnit> units(List<LimitRequest> requests, List<Integer> positions) {
		return List.copyOf(units(requests, positions, InstanceIdentity.nextToken()));
	}

	/** The units of the given positions, one per cluster slot, under one token (a new decision's, or a refunded one's). */
	private List<ScriptUnit> units(List<LimitRequest> requests, List<Integer> positions, String token) {
		String now = argumentTime();
		if (positions.size() == 1 || !this.executor.isCluster()) {
			return List.of(new ScriptUnit(select(requests, positions), positions, now, token));
		}
		Map<Integer, List<Integer>> bySlot = new LinkedHashMap<>();
		for (Integer position : positions) {
			int slot = KeyLayout.slot(this.layout.key(requests.get(position)));
			bySlot.computeIfAbsent(slot, s -> new ArrayList<>()).add(position);
		}
		List<ScriptUnit> units = new ArrayList<>(bySlot.size());
		for (List<Integer> slotPositions : bySlot.values()) {
			units.add(new ScriptUnit(select(requests, slotPositions), slotPositions, now, token));
		}
		return units;
	}

	private static List<LimitRequest> select(List<LimitRequest> requests, List<Integer> positions) {
		List<LimitRequest> selected = new ArrayList<>(positions.size());
		for (Integer position : positions) {
			selected.add(requests.get(position));
		}
		return selected;
	}

	private String argumentTime() {
		return (this.testClock != null) ? Long.toString(this.testClock.nowMicros()) : "";
	}

	private long clientTime() {
		return (this.testClock != null) ? this.testClock.nowMicros() : TimeSource.SYSTEM.nowMicros();
	}

	private static String operationCode(Operation operation) {
		return switch (operation) {
			case ACQUIRE, SHADOW -> "a";
			case CHECK -> "c";
			case RECORD -> "r";
		};
	}

	/** The script over the keys of one slot. */
	private final class ScriptUnit implements DecisionUnit {

		private final List<LimitRequest> requests;

		private final List<Integer> positions;

		private final String now;

		private final String token;

		private final List<String> keys;

		/** This unit's last decision, one per limit: a refund gives back what it charged. */
		private volatile List<Decision> charged;

		ScriptUnit(List<LimitRequest> requests, List<Integer> positions, String now, String token) {
			this.requests = requests;
			this.positions = positions;
			this.now = now;
			this.token = token;
			this.keys = new ArrayList<>(requests.size());
			for (LimitRequest request : requests) {
				this.keys.add(RedisScriptBackend.this.layout.key(request));
			}
		}

		@Override
		public List<Integer> positions() {
			return this.positions;
		}

		@Override
		public List<LimitRequest> requests() {
			return this.requests;
		}

		@Override
		public CompletionStage<List<Decision>> run(Operation operation) {
			ScriptCall call = call(operationCode(operation));
			return execute(call).thenApply(reply -> {
				List<Decision> decisions = call.decode(reply).get(0);
				this.charged = decisions;
				return decisions;
			});
		}

		@Override
		public CompletionStage<List<Decision>> untaken() {
			ScriptCall call = call("n");
			return execute(call).thenApply(reply -> call.decode(reply).get(0));
		}

		@Override
		public CompletionStage<List<Decision>> refund() {
			return refund(this.charged);
		}

		/** Gives back what the decisions took, all at one Redis time, which the operation names ({@code f<time>}). */
		CompletionStage<List<Decision>> refund(List<Decision> charged) {
			ScriptCall call = call("f" + charged.get(0).timeMicros());
			return improving(this.keys, () -> execute(call).thenApply(reply -> call.decode(reply).get(0)));
		}

		ScriptCall call(String operation) {
			ScriptCall call = new ScriptCall(this.now, clientTime());
			call.decide(operation, this.token, this.requests, this.keys);
			return call;
		}

		@Override
		public String toString() {
			return "script over " + this.keys;
		}

	}

	/**
	 * Builder of {@link RedisScriptBackend}.
	 */
	public static class Builder {

		private final RedisScriptExecutor executor;

		private String keyPrefix = "limiter:";

		private TimeSource testClock;

		private int denialCacheSize = DEFAULT_DENIAL_CACHE_SIZE;

		private boolean coalesce = true;

		Builder(RedisScriptExecutor executor) {
			this.executor = executor;
		}

		/**
		 * Prefix of every key ({@code "limiter:"} by default).
		 * @param keyPrefix the prefix, without braces
		 * @return this builder
		 */
		public Builder keyPrefix(String keyPrefix) {
			this.keyPrefix = keyPrefix;
			return this;
		}

		/**
		 * For tests only: pass this clock's time to the script instead of letting it read {@code TIME}. Never use it
		 * in production: instances with different clocks would disagree.
		 * @param clock the clock
		 * @return this builder
		 */
		public Builder testClock(TimeSource clock) {
			this.testClock = clock;
			return this;
		}

		/**
		 * How many keys the denial cache remembers ({@value RedisScriptBackend#DEFAULT_DENIAL_CACHE_SIZE} by default); 0 switches it
		 * off, so that every decision goes to Redis.
		 * @param size the number of keys, or 0
		 * @return this builder
		 */
		public Builder denialCacheSize(int size) {
			if (size < 0) {
				throw new IllegalArgumentException("denial cache size must be 0 (off) or positive, not " + size);
			}
			this.denialCacheSize = size;
			return this;
		}

		/**
		 * Whether decisions in flight at once on one connection (one cluster slot), on any keys, are sent together
		 * in one script call ({@code true} by default).
		 * @param coalesce {@code false} to send every decision by itself
		 * @return this builder
		 */
		public Builder coalesce(boolean coalesce) {
			this.coalesce = coalesce;
			return this;
		}

		/**
		 * Builds the backend.
		 * @return the backend
		 */
		public RedisScriptBackend build() {
			return new RedisScriptBackend(this.executor, new KeyLayout(this.keyPrefix), this.testClock,
					this.denialCacheSize, this.coalesce);
		}

	}

}
