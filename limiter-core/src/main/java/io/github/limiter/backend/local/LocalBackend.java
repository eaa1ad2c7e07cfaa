package io.github.limiter.backend.local;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.RemovalCause;

import io.github.limiter.Decision;
import io.github.limiter.Limit;
import io.github.limiter.LimitRequest;
import io.github.limiter.Operation;
import io.github.limiter.TimeSource;
import io.github.limiter.algorithm.AbstractLimit;
import io.github.limiter.algorithm.Outcome;
import io.github.limiter.backend.redis.KeyLayout;
import io.github.limiter.spi.RateLimiterBackend;

/**
 * In-process backend: the algorithms' own logic over a bounded cache, with the semantics of the Redis backends.
 *
 * <p>Limits hold per JVM only. Memory is bounded by a Caffeine cache of at most {@code maxKeys} keys, whose W-TinyLFU
 * policy admits a new key only in place of a less used one: a flood of one-off keys pushes out the keys used least.
 * A key used often keeps its state; one used only a few times (a victim's failed logins) can lose it to a flood of
 * more new keys than {@code maxKeys}, and its limit then starts afresh. Keys whose state has expired are dropped by a
 * sweep that runs every few thousand new keys, on the common pool, never on the deciding thread. (Caffeine's own
 * per-entry expiry, renewed on every read, made a decision 2.5 times slower; the size bound alone costs nothing
 * measurable.) An owner that knows no new keys will come may ask for a sweep ({@link #sweepExpired()}).
 *
 * <p>Each key's state is one immutable value swapped by compare-and-set: a decision on one limit reads it, decides,
 * and publishes the next state only if nobody else did meanwhile (otherwise it decides again), so two threads on one
 * key never wait for a lock. Decisions over several limits hold their keys in a fixed order by swapping each state
 * for a {@link Held} marker (other deciders spin briefly, then park, until it is released), so they are all or
 * nothing and never deadlock.
 *
 * <p>On a clock that {@linkplain TimeSource#ticks() ticks} ({@link TimeSource#ticking()}), a decision reads the
 * clock's {@linkplain TimeSource#recentMicros() recent reading}, and a call that this reading does not admit at once
 * is decided again at {@linkplain TimeSource#nowMicros() the present}: an older time never refuses or delays a call,
 * and retry and delay times are exact. Only token and leaky buckets, whose state drains continuously ({@link
 * io.github.limiter.algorithm.Algorithm#continuous()}), are decided on the recent reading: windows and logs are
 * always decided at the present, since counted from an older time a whole window's permits could come back early.
 */
public final class LocalBackend implements RateLimiterBackend {

	/** Default bound on the number of keys kept. */
	public static final int DEFAULT_MAX_KEYS = 100_000;

	/** New keys between two sweeps of expired ones. */
	private static final int SWEEP_EVERY = 4096;

	private final Cache<StoreKey, Entry> entries;

	private final TimeSource clock;

	/** Whether the clock's recent reading may lag: calls it does not admit at once are then decided again. */
	private final boolean ticks;

	private final AtomicInteger insertions = new AtomicInteger();

	private final AtomicBoolean sweeping = new AtomicBoolean();

	private LocalBackend(TimeSource clock, int maxKeys) {
		if (maxKeys < 1) {
			throw new IllegalArgumentException("max keys must be positive but was " + maxKeys);
		}
		this.clock = clock;
		this.ticks = clock.ticks();
		this.entries = Caffeine.newBuilder()
			.maximumSize(maxKeys)
			.evictionListener((StoreKey key, Entry entry, RemovalCause cause) -> {
				if (entry != null) {
					entry.remove();
				}
			})
			.build();
	}

	/**
	 * A backend on the system clock keeping at most {@value #DEFAULT_MAX_KEYS} keys.
	 * @return the backend
	 */
	public static LocalBackend create() {
		return new LocalBackend(TimeSource.SYSTEM, DEFAULT_MAX_KEYS);
	}

	/**
	 * A backend with a chosen clock and bound.
	 * @param clock the clock
	 * @param maxKeys the most keys kept
	 * @return the backend
	 */
	public static LocalBackend create(TimeSource clock, int maxKeys) {
		return new LocalBackend(clock, maxKeys);
	}

	/**
	 * The clock this backend decides on.
	 * @return the clock
	 */
	public TimeSource clock() {
		return this.clock;
	}

	/**
	 * Number of keys currently held, after dropping those whose state expired and Caffeine's pending maintenance.
	 * @return the number of keys
	 */
	public int size() {
		sweep();
		this.entries.cleanUp();
		return (int) this.entries.estimatedSize();
	}

	/**
	 * Drops the keys whose state expired, on the common pool, for an owner that knows no new keys will come to start
	 * the sweep (a guard whose outage ended, whose local shares decide nothing until the next one).
	 */
	public void sweepExpired() {
		if (this.entries.estimatedSize() > 0 && !this.sweeping.get()) {
			ForkJoinPool.commonPool().execute(this::sweep);
		}
	}

	/** Keys held, expired or not, without a sweep (for tests). */
	long held() {
		this.entries.cleanUp();
		return this.entries.estimatedSize();
	}

	@Override
	public CompletionStage<Decision> decideAsync(List<LimitRequest> requests, Operation operation) {
		return CompletableFuture.completedFuture(decide(requests, operation));
	}

	@Override
	public Decision decide(List<LimitRequest> requests, Operation operation) {
		if (requests.isEmpty()) {
			throw new IllegalArgumentException("a decision needs at least one limit request");
		}
		if (requests.size() == 1 && operation != Operation.RECORD) {
			return decideOne(requests.get(0), operation, DECISION);
		}
		Held[] locked = new Held[requests.size()];
		Integer[] order = new Integer[requests.size()];
		StoreKey[] keys = new StoreKey[requests.size()];
		for (int i = 0; i < order.length; i++) {
			order[i] = i;
			keys[i] = StoreKey.of(requests.get(i));
		}
		if (order.length > 1) {
			Arrays.sort(order, Comparator.comparing((Integer i) -> keys[i]));
		}
		try {
			return lockAndDecide(requests, keys, order, 0, locked, operation);
		}
		finally {
			release(locked);
		}
	}

	@Override
	public boolean tryAcquire(LimitRequest request) {
		return decideOne(request, Operation.ACQUIRE, ALLOWED);
	}

	/**
	 * The common case: one limit, one key, no ordering, arrays or locks. The answer is built from the outcome once it
	 * stands: a {@link Decision}, or only whether the call is admitted, which allocates nothing but the key's next
	 * state.
	 */
	private <R> R decideOne(LimitRequest request, Operation operation, Answer<R> answer) {
		StoreKey key = StoreKey.of(request);
		AbstractLimit<Object> limit = algorithm(request.limit());
		Entry entry = entry(key);
		int spins = 0;
		int lost = 0;
		boolean present = !this.ticks || !limit.algorithm().continuous();
		while (true) {
			Object state = entry.state;
			if (state == REMOVED) {
				entry = entry(key);
				continue;
			}
			if (state instanceof Held) {
				spins = spin(spins);
				continue;
			}
			long now = present ? this.clock.nowMicros() : this.clock.recentMicros();
			Outcome<Object> outcome = limit.evaluate(state, now, request.cost());
			if (!present && !admittedAtOnce(outcome)) {
				// An older time never refuses or delays a call: decided again at the present.
				present = true;
				continue;
			}
			boolean taken = operation.acquires() && outcome.allowed();
			if (taken && !STATE.compareAndSet(entry, state, outcome.next())) {
				lost = backOff(lost);
				continue;
			}
			return answer.of(limit, outcome, now, taken, request.cost());
		}
	}

	/** What a single-key decision answers, from its outcome. */
	@FunctionalInterface
	private interface Answer<R> {

		/**
		 * @param limit the limit decided
		 * @param outcome its outcome
		 * @param now the time of the decision
		 * @param taken whether the outcome's permits were taken (its state published)
		 * @param cost the permits the call asked for
		 * @return the answer
		 */
		R of(AbstractLimit<Object> limit, Outcome<Object> outcome, long now, boolean taken, long cost);

	}

	/** The whole decision; an admitted sliding-log call gets the token of its own entries, as on Redis. */
	private static final Answer<Decision> DECISION = (limit, outcome, now, taken, cost) -> decision(limit, outcome,
			outcome.allowed(), now, taken ? limit.token(outcome.next(), cost) : null);

	/** Only whether the call is admitted: nothing is built. */

	private static final Answer<Boolean> ALLOWED = (limit, outcome, now, taken, cost) -> outcome.allowed();

	/**
	 * Backs off after a compare-and-set lost to another thread deciding on the same key: 1, 2, 4... up to 64 spin-wait
	 * hints, doubling with each loss in a row, so that threads on one key stop taking its cache line from each other
	 * (two threads on one key: 7.1 decisions/us with a single hint, 11.5 with this; four threads on two cores: 4.4 and
	 * 11.2). The thread never sleeps: at most a few microseconds of hints.
	 * @param lost compare-and-sets this decision has lost so far
	 * @return the losses, counting this one
	 */
	private static int backOff(int lost) {
		for (int hints = 1 << Math.min(lost, 6); hints > 0; hints--) {
			Thread.onSpinWait();
		}
		return lost + 1;
	}

	/**
	 * Waits for a multi-limit decision to release a key: busy at first, then yielding the processor, then parked for
	 * growing moments (a holder preempted on a loaded machine may take milliseconds).
	 */
	private static int spin(int spins) {
		if (spins < 64) {
			Thread.onSpinWait();
		}
		else if (spins < 128) {
			Thread.yield();
		}
		else {
			LockSupport.parkNanos(Math.min(1_000_000L, 1_000L << Math.min(10, spins - 128)));
		}
		return spins + 1;
	}

	/** Holds the entries one after the other in key order, then decides with all of them held. */
	private Decision lockAndDecide(List<LimitRequest> requests, StoreKey[] keys, Integer[] order, int depth,
			Held[] locked, Operation operation) {
		if (depth == order.length) {
			return decideLocked(requests, locked, operation);
		}
		int index = order[depth];
		if (depth > 0 && keys[index].equals(keys[order[depth - 1]])) {
			locked[index] = locked[order[depth - 1]];
			return lockAndDecide(requests, keys, order, depth + 1, locked, operation);
		}
		locked[index] = hold(keys[index]);
		return lockAndDecide(requests, keys, order, depth + 1, locked, operation);
	}

	/** Swaps a key's state for a marker holding it, once no other decision holds it. */
	private Held hold(StoreKey key) {
		Entry entry = entry(key);
		int spins = 0;
		int lost = 0;
		while (true) {
			Object state = entry.state;
			if (state == REMOVED) {
				entry = entry(key);
			}
			else if (state instanceof Held) {
				spins = spin(spins);
			}
			else {
				Held held = new Held(entry, state);
				if (STATE.compareAndSet(entry, state, held)) {
					return held;
				}
				lost = backOff(lost);
			}
		}
	}

	/** Publishes the states of held entries (each once, even when a decision names it twice). */
	private static void release(Held[] locked) {
		for (Held held : locked) {
			if (held != null && held.entry.state == held) {
				held.entry.state = held.current;
			}
		}
	}

	/**
	 * Decides with every entry held: on the clock's recent reading when it ticks and every limit is continuous, and
	 * again at the present unless every limit admits at once.
	 */
	private Decision decideLocked(List<LimitRequest> requests, Held[] entries, Operation operation) {
		int n = requests.size();
		List<Decision> parts = new ArrayList<>(n);
		if (operation == Operation.RECORD) {
			long now = this.clock.nowMicros();
			for (int i = 0; i < n; i++) {
				parts.add(record(requests.get(i), entries[i], now));
			}
			return Decision.combine(parts);
		}
		boolean recent = this.ticks && requests.stream().allMatch((request) -> request.limit().algorithm().continuous());
		long now = recent ? this.clock.recentMicros() : this.clock.nowMicros();
		Outcome<?>[] outcomes = evaluate(requests, entries, now);
		if (recent && !Arrays.stream(outcomes).allMatch(LocalBackend::admittedAtOnce)) {
			now = this.clock.nowMicros();
			outcomes = evaluate(requests, entries, now);
		}
		boolean all = Arrays.stream(outcomes).allMatch(Outcome::allowed);
		for (int i = 0; i < n; i++) {
			LimitRequest request = requests.get(i);
			Outcome<?> outcome = outcomes[i];
			String token = null;
			if (operation.acquires()) {
				if (all) {
					entries[i].current = outcome.next();
					token = algorithm(request.limit()).token(outcome.next(), request.cost());
				}
				else if (outcome.allowed()) {
					// All or nothing: this limit had room but consumes nothing; report it untouched.
					outcome = algorithm(request.limit()).evaluate(entries[i].current, now, 0);
				}
			}
			parts.add(decision(request.limit(), outcome, outcome.allowed(), now, token));
		}
		return Decision.combine(parts);
	}

	private static Outcome<?>[] evaluate(List<LimitRequest> requests, Held[] entries, long now) {
		Outcome<?>[] outcomes = new Outcome<?>[requests.size()];
		for (int i = 0; i < outcomes.length; i++) {
			LimitRequest request = requests.get(i);
			outcomes[i] = algorithm(request.limit()).evaluate(entries[i].current, now, request.cost());
		}
		return outcomes;
	}

	/** Admitted without a delay: the only outcome decided on a clock's recent reading. */
	private static boolean admittedAtOnce(Outcome<?> outcome) {
		return outcome.allowed() && outcome.delayMicros() == 0;
	}

	private Decision record(LimitRequest request, Held entry, long now) {
		AbstractLimit<Object> limit = algorithm(request.limit());
		boolean within = limit.evaluate(entry.current, now, request.cost()).allowed();
		entry.current = limit.record(entry.current, now, request.cost());
		Outcome<Object> state = limit.evaluate(entry.current, now, 0);
		Outcome<Object> again = limit.evaluate(entry.current, now, request.cost());
		return Decision.of(limit.name(), within, limit.capacity(), state.remaining(),
				again.allowed() ? 0 : again.retryAfterMicros(), state.resetAfterMicros(), 0, now, null);
	}

	private static Decision decision(Limit limit, Outcome<?> outcome, boolean allowed, long now, String token) {
		return Decision.of(limit.name(), allowed, limit.capacity(), outcome.remaining(), outcome.retryAfterMicros(),
				outcome.resetAfterMicros(), outcome.delayMicros(), now, token);
	}

	@SuppressWarnings("unchecked")
	private static AbstractLimit<Object> algorithm(Limit limit) {
		if (limit instanceof AbstractLimit<?> known) {
			return (AbstractLimit<Object>) known;
		}
		throw new IllegalArgumentException("the local backend enforces the limits of io.github.limiter.algorithm, not "
				+ limit.getClass().getName());
	}

	private Entry entry(StoreKey key) {
		Entry entry = this.entries.getIfPresent(key);
		if (entry != null) {
			entry.follow(key.limit);
			return entry;
		}
		entry = this.entries.get(key, k -> new Entry(algorithm(k.limit)));
		entry.follow(key.limit);
		if (this.insertions.incrementAndGet() % SWEEP_EVERY == 0 && !this.sweeping.get()) {
			ForkJoinPool.commonPool().execute(this::sweep);
		}
		return entry;
	}

	/** Drops the keys whose state expired. One sweeper at a time; a held entry is left for the next sweep. */
	private void sweep() {
		if (!this.sweeping.compareAndSet(false, true)) {
			return;
		}
		try {
			long now = this.clock.nowMicros();
			for (Map.Entry<StoreKey, Entry> mapping : this.entries.asMap().entrySet()) {
				Entry entry = mapping.getValue();
				Object state = entry.state;
				if (state == REMOVED || state instanceof Held) {
					continue;
				}
				boolean expired = state == null || entry.limit.expiresAtMicros(state) <= now;
				if (expired && STATE.compareAndSet(entry, state, REMOVED)) {
					this.entries.asMap().remove(mapping.getKey(), entry);
				}
			}
		}
		finally {
			this.sweeping.set(false);
		}
	}

	/** Each key on its own: a refund gives back, so there is nothing to hold all or nothing. */
	@Override
	public CompletionStage<Void> refundAsync(List<LimitRequest> requests, Decision acquired) {
		List<Decision> parts = RateLimiterBackend.parts(requests, acquired);
		for (int i = 0; i < parts.size(); i++) {
			refund(requests.get(i), parts.get(i));
		}
		return CompletableFuture.completedFuture(null);
	}

	private void refund(LimitRequest request, Decision charged) {
		AbstractLimit<Object> limit = algorithm(request.limit());
		Entry entry = this.entries.getIfPresent(StoreKey.of(request));
		int spins = 0;
		int lost = 0;
		while (entry != null) {
			Object state = entry.state;
			if (state == REMOVED || state == null) {
				// Evicted or reset since: nothing of the call is left to give back.
				return;
			}
			if (state instanceof Held) {
				spins = spin(spins);
				continue;
			}
			Object next = limit.refund(state, this.clock.nowMicros(), request.cost(), charged);
			if (next == state || STATE.compareAndSet(entry, state, next)) {
				return;
			}
			lost = backOff(lost);
		}
	}

	@Override
	public CompletionStage<Void> resetAsync(Limit limit, String key) {
		Entry entry = this.entries.getIfPresent(StoreKey.of(LimitRequest.of(limit, key)));
		if (entry != null) {
			int spins = 0;
			while (true) {
				Object state = entry.state;
				if (state == REMOVED || (!(state instanceof Held) && STATE.compareAndSet(entry, state, null))) {
					break;
				}
				spins = spin(spins);
			}
		}
		return CompletableFuture.completedFuture(null);
	}

	/**
	 * A key's place: the limit's name, its storage (a token and a leaky bucket share theirs, as their Redis keys do)
	 * and the key.
	 */
	private record StoreKey(String name, String storage, String key, Limit limit) implements Comparable<StoreKey> {

		static StoreKey of(LimitRequest request) {
			Limit limit = request.limit();
			return new StoreKey(limit.name(), limit.algorithm().code(), stored(request.key()), limit);
		}

		/**
		 * A long key is kept as its digest, as on Redis: the bound on keys is then a bound on memory too (keys of
		 * 4,096 characters kept 3.6-8.5 KB each, so that half the default bound of long keys ran a 192 MB heap out).
		 * A key kept as it is never starts with {@code ~}, so that none can be chosen to equal another's digest.
		 */
		private static String stored(String key) {
			return (key.length() <= KeyLayout.MAX_PLAIN_LENGTH && (key.isEmpty() || key.charAt(0) != '~')) ? key
					: KeyLayout.material(key);
		}

		@Override
		public boolean equals(Object other) {
			return other instanceof StoreKey that && this.name.equals(that.name) && this.storage.equals(that.storage)
					&& this.key.equals(that.key);
		}

		@Override
		public int hashCode() {
			return (this.name.hashCode() * 31 + this.storage.hashCode()) * 31 + this.key.hashCode();
		}

		@Override
		public int compareTo(StoreKey other) {
			int byName = this.name.compareTo(other.name);
			if (byName != 0) {
				return byName;
			}
			int byStorage = this.storage.compareTo(other.storage);
			return (byStorage != 0) ? byStorage : this.key.compareTo(other.key);
		}

	}

	/** A key's slot: its limit and its state (null when fresh), {@link #REMOVED} or {@link Held}. */
	private static final class Entry {

		/** The limit that last decided the state: its numbers tell the sweep when the state expires. */
		volatile AbstractLimit<Object> limit;

		volatile Object state;

		Entry(AbstractLimit<Object> limit) {
			this.limit = limit;
		}

		/**
		 * Follows a limit whose numbers changed (retuned at runtime, same name and algorithm): the state is kept, and
		 * from now on expires by the new numbers. Compared by identity only: a limit built anew for each call costs a
		 * write here, not a comparison of its definition on every decision.
		 */
		void follow(Limit limit) {
			if (this.limit != limit) {
				this.limit = algorithm(limit);
			}
		}

		/**
		 * Marks the entry evicted, so that a decider still holding it looks the key up again instead of publishing
		 * into it. An entry held by a multi-limit decision is left to it: that decision is made, and the key starts
		 * afresh next time, as an evicted key does.
		 */
		void remove() {
			Object current;
			while (!((current = this.state) instanceof Held) && current != REMOVED) {
				if (STATE.compareAndSet(this, current, REMOVED)) {
					return;
				}
			}
		}

	}

	/** Marks an entry evicted from the cache: a decider that still holds it looks the key up again. */
	private static final Object REMOVED = new Object();

	private static final VarHandle STATE;

	static {
		try {
			STATE = MethodHandles.lookup().findVarHandle(Entry.class, "state", Object.class);
		}
		catch (ReflectiveOperationException ex) {
			throw new ExceptionInInitializerError(ex);
		}
	}

	/** An entry held by a multi-limit decision, with the state that decision works on until it releases it. */
	private static final class Held {

		final Entry entry;

		Object current;

		Held(Entry entry, Object current) {
			this.entry = entry;
			this.current = current;
		}

	}

}
