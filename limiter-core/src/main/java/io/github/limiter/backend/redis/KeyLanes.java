package io.github.limiter.backend.redis;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BiFunction;

import io.github.limiter.Decision;
import io.github.limiter.Limit;
import io.github.limiter.LimitRequest;
import io.github.limiter.Operation;
import io.github.limiter.spi.BackendException;

/**
 * Coalesces the decisions this JVM has in flight at once for one key and limit: normally one script call per key is
 * in flight; calls that arrive meanwhile wait in the key's lane and go together in the next call, which decides each of them in
 * arrival order ({@code batch.lua}). Every caller still gets its own exact decision; a hot key costs one round-trip
 * per batch instead of one per call, and a key nobody else is using goes straight out.
 *
 * <p>A lane holds at most {@code maxWaiting} calls: beyond that (Redis not answering, say), a call fails at once with
 * a {@link BackendException}, which the failure policy answers, so that a stalled key cannot pile up work to replay.
 * Calls whose future was completed by someone else (cancelled) while waiting are dropped, not sent.
 *
 * <p>Lanes take no lock: a call joins the lane's queue, and whoever turns the lane from idle to busy (a compare-and-set)
 * sends what the queue holds. An idle lane leaves the map; a caller that still reaches it is served by it all the
 * same, so two lanes of one key may briefly both have a call in flight, which costs a little coalescing, never
 * correctness (every script call is atomic and exact).
 */
final class KeyLanes {

	private final ConcurrentHashMap<LaneKey, Lane> lanes = new ConcurrentHashMap<>();

	private final BiFunction<String, List<Call>, CompletionStage<List<Decision>>> sender;

	private final int maxBatch;

	private final int maxWaiting;

	/**
	 * Creates lanes.
	 * @param sender sends one batch of calls on one key and answers one decision per call, in order
	 * @param maxBatch at most this many calls per script call
	 * @param maxWaiting at most this many calls waiting per key
	 */
	KeyLanes(BiFunction<String, List<Call>, CompletionStage<List<Decision>>> sender, int maxBatch, int maxWaiting) {
		this.sender = sender;
		this.maxBatch = maxBatch;
		this.maxWaiting = maxWaiting;
	}

	/**
	 * Decides one call, alone or with the other calls in flight on its key.
	 * @param key the Redis key
	 * @param request the request
	 * @param operation ACQUIRE, CHECK or SHADOW
	 * @return the decision
	 */
	CompletionStage<Decision> submit(String key, LimitRequest request, Operation operation) {
		Call call = new Call(request, operation, new CompletableFuture<>());
		// One lane per limit object too: a batch is decided with one limit's parameters.
		LaneKey laneKey = new LaneKey(key, request.limit());
		Lane lane = this.lanes.get(laneKey);
		if (lane == null) {
			lane = this.lanes.computeIfAbsent(laneKey, Lane::new);
		}
		if (lane.size.incrementAndGet() > this.maxWaiting) {
			lane.size.decrementAndGet();
			call.future.completeExceptionally(new BackendException(this.maxWaiting
					+ " decisions are already waiting for Redis on key " + key, null));
			return call.future;
		}
		lane.waiting.add(call);
		if (lane.busy.compareAndSet(false, true)) {
			drive(lane, take(lane));
		}
		return call.future;
	}

	/**
	 * Sends batches on a lane until it is idle. A batch answered synchronously (a blocking client) loops here
	 * instead of recursing; one answered later continues from its completion.
	 */
	private void drive(Lane lane, List<Call> batch) {
		while (batch != null) {
			CompletableFuture<List<Decision>> reply;
			try {
				reply = this.sender.apply(lane.laneKey.key(), batch).toCompletableFuture();
			}
			catch (RuntimeException ex) {
				reply = CompletableFuture.failedFuture(ex);
			}
			if (!reply.isDone()) {
				List<Call> sent = batch;
				reply.whenComplete((decisions, failure) -> {
					// The next batch goes out before this one's callers run their continuations.
					List<Call> next = take(lane);
					if (next != null) {
						drive(lane, next);
					}
					answer(lane, sent, decisions, failure);
				});
				return;
			}
			List<Decision> decisions = null;
			Throwable failure = null;
			try {
				decisions = reply.join();
			}
			catch (CompletionException ex) {
				failure = (ex.getCause() != null) ? ex.getCause() : ex;
			}
			catch (RuntimeException ex) {
				failure = ex;
			}
			List<Call> next = take(lane);
			answer(lane, batch, decisions, failure);
			batch = next;
		}
	}

	/**
	 * The next batch of a busy lane, or {@code null} after making it idle. A call that joins while the lane goes
	 * idle finds it idle and turns it busy itself, or is taken here by the re-check.
	 */
	private List<Call> take(Lane lane) {
		while (true) {
			List<Call> batch = null;
			Call call;
			while ((batch == null || batch.size() < this.maxBatch) && (call = lane.waiting.poll()) != null) {
				lane.size.decrementAndGet();
				if (!call.future.isDone()) {
					if (batch == null) {
						batch = new ArrayList<>();
					}
					batch.add(call);
				}
			}
			if (batch != null) {
				return batch;
			}
			lane.busy.set(false);
			if (lane.waiting.isEmpty() || !lane.busy.compareAndSet(false, true)) {
				if (lane.waiting.isEmpty()) {
					this.lanes.remove(lane.laneKey, lane);
				}
				return null;
			}
		}
	}

	/** Answers the calls of a batch that came back. */
	private static void answer(Lane lane, List<Call> sent, List<Decision> decisions, Throwable failure) {
		if (failure == null && (decisions == null || decisions.size() != sent.size())) {
			failure = new BackendException("the limiter script answered " + ((decisions != null) ? decisions.size() : 0)
					+ " decisions for " + sent.size() + " calls on " + lane.laneKey.key(), null);
		}
		for (int i = 0; i < sent.size(); i++) {
			if (failure != null) {
				sent.get(i).future.completeExceptionally(failure);
			}
			else {
				sent.get(i).future.complete(decisions.get(i));
			}
		}
	}

	/**
	 * One caller's decision.
	 * @param request the request
	 * @param operation ACQUIRE, CHECK or SHADOW
	 * @param future completed with the caller's decision
	 */
	record Call(LimitRequest request, Operation operation, CompletableFuture<Decision> future) {
	}

	private record LaneKey(String key, Limit limit) {
	}

	private static final class Lane {

		final LaneKey laneKey;

		final ConcurrentLinkedQueue<Call> waiting = new ConcurrentLinkedQueue<>();

		/** Calls queued or being taken: bounds the queue. */
		final AtomicInteger size = new AtomicInteger();

		/** A batch of this lane is in flight (or being taken). */
		final AtomicBoolean busy = new AtomicBoolean();

		Lane(LaneKey laneKey) {
			this.laneKey = laneKey;
		}

	}

}
