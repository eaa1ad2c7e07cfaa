package io.github.limiter.backend.local;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import io.github.limiter.Decision;
import io.github.limiter.Limit;
import io.github.limiter.LimitRequest;
import io.github.limiter.Operation;
import io.github.limiter.TimeSource;
import io.github.limiter.algorithm.AbstractLimit;
import io.github.limiter.algorithm.Algorithm;
import io.github.limiter.algorithm.Outcome;
import io.github.limiter.spi.InstanceIdentity;
import io.github.limiter.spi.RateLimiterBackend;

/**
 * In-process backend: the algorithms' own logic over a concurrent map, with the semantics of the Redis backends.
 *
 * <p>Limits hold per JVM only. Memory is bounded: keys whose state has expired are dropped, and when more than
 * {@code maxKeys} keys are live, arbitrary ones are evicted down to 90% of the bound (an evicted key starts afresh,
 * which can only admit more, never less). Decisions over several limits lock their keys in a fixed order, so they are all or nothing
 * and never deadlock.
 */
public final class LocalBackend implements RateLimiterBackend {

	/** Default bound on the number of keys kept. */
	public static final int DEFAULT_MAX_KEYS = 100_000;

	private static final int SWEEP_EVERY = 4096;

	private final Map<StoreKey, Entry> entries = new ConcurrentHashMap<>();

	private final TimeSource clock;

	private final int maxKeys;

	private final AtomicInteger insertions = new AtomicInteger();

	private final AtomicBoolean sweeping = new AtomicBoolean();

	private volatile boolean sweepDue;

	private LocalBackend(TimeSource clock, int maxKeys) {
		if (maxKeys < 1) {
			throw new IllegalArgumentException("max keys must be positive but was " + maxKeys);
		}
		this.clock = clock;
		this.maxKeys = maxKeys;
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
	 * Number of keys currently held, expired ones included until the next sweep.
	 * @return the number of keys
	 */
	public int size() {
		return this.entries.size();
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
			return decideOne(requests.get(0), operation);
		}
		Entry[] locked = new Entry[requests.size()];
		Integer[] order = new Integer[requests.size()];
		StoreKey[] keys = new StoreKey[requests.size()];
		for (int i = 0; i < order.length; i++) {
			order[i] = i;
			keys[i] = StoreKey.of(requests.get(i));
		}
		if (order.length > 1) {
			Arrays.sort(order, Comparator.comparing((Integer i) -> keys[i]));
		}
		Decision decision = lockAndDecide(requests, keys, order, 0, locked, operation);
		// Sweep with no entry locked: sweeping locks entries one by one, which could deadlock under held locks.
		if (this.sweepDue) {
			sweep(this.clock.nowMicros());
		}
		return decision;
	}

	/** The common case: one limit, one key, no ordering or arrays. */
	private Decision decideOne(LimitRequest request, Operation operation) {
		StoreKey key = StoreKey.of(request);
		AbstractLimit<Object> limit = algorithm(request.limit());
		Decision decision;
		while (true) {
			Entry entry = entry(key);
			synchronized (entry) {
				if (entry.removed) {
					continue;
				}
				long now = this.clock.nowMicros();
				Outcome<Object> outcome = limit.evaluate(entry.state, now, request.cost());
				String token = null;
				if (operation.acquires() && outcome.allowed()) {
					entry.state = outcome.next();
					token = (limit.algorithm() == Algorithm.SLIDING_WINDOW_LOG) ? InstanceIdentity.nextToken() : null;
				}
				decision = decision(limit, outcome, outcome.allowed(), now, token);
				break;
			}
		}
		if (this.sweepDue) {
			sweep(this.clock.nowMicros());
		}
		return decision;
	}

	/** Locks the entries one after the other in key order, then decides with all of them held. */
	private Decision lockAndDecide(List<LimitRequest> requests, StoreKey[] keys, Integer[] order, int depth,
			Entry[] locked, Operation operation) {
		if (depth == order.length) {
			// The time is read with every entry held, so decisions on one key see non-decreasing times.
			return decideLocked(requests, locked, operation, this.clock.nowMicros());
		}
		int index = order[depth];
		if (depth > 0 && keys[index].equals(keys[order[depth - 1]])) {
			locked[index] = locked[order[depth - 1]];
			return lockAndDecide(requests, keys, order, depth + 1, locked, operation);
		}
		while (true) {
			Entry entry = entry(keys[index]);
			synchronized (entry) {
				if (!entry.removed) {
					locked[index] = entry;
					return lockAndDecide(requests, keys, order, depth + 1, locked, operation);
				}
			}
		}
	}

	private Decision decideLocked(List<LimitRequest> requests, Entry[] entries, Operation operation, long now) {
		int n = requests.size();
		List<Decision> parts = new ArrayList<>(n);
		if (operation == Operation.RECORD) {
			for (int i = 0; i < n; i++) {
				parts.add(record(requests.get(i), entries[i], now));
			}
			return Decision.combine(parts);
		}
		Outcome<?>[] outcomes = new Outcome<?>[n];
		boolean all = true;
		for (int i = 0; i < n; i++) {
			LimitRequest request = requests.get(i);
			outcomes[i] = algorithm(request.limit()).evaluate(entries[i].state, now, request.cost());
			all &= outcomes[i].allowed();
		}
		for (int i = 0; i < n; i++) {
			LimitRequest request = requests.get(i);
			Outcome<?> outcome = outcomes[i];
			String token = null;
			if (operation.acquires()) {
				if (all) {
					entries[i].state = outcome.next();
					token = (request.limit().algorithm() == Algorithm.SLIDING_WINDOW_LOG) ? InstanceIdentity.nextToken() : null;
				}
				else if (outcome.allowed()) {
					// All or nothing: this limit had room but consumes nothing; report it untouched.
					outcome = algorithm(request.limit()).evaluate(entries[i].state, now, 0);
				}
			}
			parts.add(decision(request.limit(), outcome, outcome.allowed(), now, token));
		}
		return Decision.combine(parts);
	}

	private Decision record(LimitRequest request, Entry entry, long now) {
		AbstractLimit<Object> limit = algorithm(request.limit());
		boolean within = limit.evaluate(entry.state, now, request.cost()).allowed();
		entry.state = limit.record(entry.state, now, request.cost());
		Outcome<Object> state = limit.evaluate(entry.state, now, 0);
		Outcome<Object> again = limit.evaluate(entry.state, now, request.cost());
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
		Entry entry = this.entries.get(key);
		if (entry != null) {
			return entry;
		}
		entry = this.entries.computeIfAbsent(key, k -> new Entry(algorithm(k.limit)));
		int inserted = this.insertions.incrementAndGet();
		if (this.entries.size() > this.maxKeys || inserted % SWEEP_EVERY == 0) {
			this.sweepDue = true;
		}
		return entry;
	}

	/** Drops expired keys, then evicts until under the bound. One sweeper at a time; others carry on. */
	private void sweep(long now) {
		if (!this.sweeping.compareAndSet(false, true)) {
			return;
		}
		this.sweepDue = false;
		try {
			removeWhile(this.entries.entrySet().iterator(), now, true);
			if (this.entries.size() > this.maxKeys) {
				removeWhile(this.entries.entrySet().iterator(), now, false);
			}
		}
		finally {
			this.sweeping.set(false);
		}
	}

	private void removeWhile(Iterator<Map.Entry<StoreKey, Entry>> iterator, long now, boolean expiredOnly) {
		int target = this.maxKeys - this.maxKeys / 10;
		while (iterator.hasNext() && (expiredOnly || this.entries.size() > target)) {
			Entry entry = iterator.next().getValue();
			synchronized (entry) {
				boolean expired = entry.state == null || entry.limit.expiresAtMicros(entry.state) <= now;
				if (expired || !expiredOnly) {
					entry.removed = true;
					iterator.remove();
				}
			}
		}
	}

	@Override
	public CompletionStage<Void> resetAsync(Limit limit, String key) {
		Entry entry = this.entries.get(StoreKey.of(LimitRequest.of(limit, key)));
		if (entry != null) {
			synchronized (entry) {
				entry.state = null;
			}
		}
		return CompletableFuture.completedFuture(null);
	}

	private record StoreKey(String name, Algorithm algorithm, String key, Limit limit) implements Comparable<StoreKey> {

		static StoreKey of(LimitRequest request) {
			Limit limit = request.limit();
			return new StoreKey(limit.name(), limit.algorithm(), request.key(), limit);
		}

		@Override
		public boolean equals(Object other) {
			return other instanceof StoreKey that && this.name.equals(that.name) && this.algorithm == that.algorithm
					&& this.key.equals(that.key);
		}

		@Override
		public int hashCode() {
			return (this.name.hashCode() * 31 + this.algorithm.hashCode()) * 31 + this.key.hashCode();
		}

		@Override
		public int compareTo(StoreKey other) {
			int byName = this.name.compareTo(other.name);
			if (byName != 0) {
				return byName;
			}
			int byAlgorithm = this.algorithm.compareTo(other.algorithm);
			return (byAlgorithm != 0) ? byAlgorithm : this.key.compareTo(other.key);
		}

	}

	private static final class Entry {

		final AbstractLimit<Object> limit;

		Object state;

		boolean removed;

		Entry(AbstractLimit<Object> limit) {
			this.limit = limit;
		}

	}

}
