package io.github.limiter.backend.redis;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BiFunction;

import io.github.limiter.Decision;
import io.github.limiter.LimitRequest;
import io.github.limiter.Operation;
import io.github.limiter.spi.BackendException;

/**
 * Coalesces the decisions this JVM has in flight at once for one key: at most one script call per key is in flight;
 * calls that arrive meanwhile wait in the key's lane and go together in the next call, which decides each of them in
 * arrival order ({@code batch.lua}). Every caller still gets its own exact decision; a hot key costs one round-trip
 * per batch instead of one per call, and a key nobody else is using goes straight out.
 *
 * <p>A lane holds at most {@code maxWaiting} calls: beyond that (Redis not answering, say), a call fails at once with
 * a {@link BackendException}, which the failure policy answers, so that a stalled key cannot pile up work to replay.
 * Calls whose future was completed by someone else (cancelled) while waiting are dropped, not sent.
 */
final class KeyLanes {

	private final ConcurrentHashMap<String, Lane> lanes = new ConcurrentHashMap<>();

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
		while (true) {
			Lane lane = this.lanes.computeIfAbsent(key, Lane::new);
			synchronized (lane) {
				if (lane.closed) {
					continue;
				}
				if (lane.busy) {
					if (lane.waiting.size() >= this.maxWaiting) {
						call.future.completeExceptionally(new BackendException(this.maxWaiting
								+ " decisions are already waiting for Redis on key " + key, null));
					}
					else {
						lane.waiting.add(call);
					}
					return call.future;
				}
				lane.busy = true;
			}
			drive(lane, List.of(call));
			return call.future;
		}
	}

	/** Number of keys with a call in flight. */
	int busyKeys() {
		return this.lanes.size();
	}

	/**
	 * Sends batches on a lane until it is idle. A batch answered synchronously (a blocking client) loops here
	 * instead of recursing; one answered later continues from its completion.
	 */
	private void drive(Lane lane, List<Call> batch) {
		while (batch != null) {
			CompletableFuture<List<Decision>> reply;
			try {
				reply = this.sender.apply(lane.key, batch).toCompletableFuture();
			}
			catch (RuntimeException ex) {
				reply = CompletableFuture.failedFuture(ex);
			}
			if (!reply.isDone()) {
				List<Call> sent = batch;
				reply.whenComplete((decisions, failure) -> drive(lane, finish(lane, sent, decisions, failure)));
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
			batch = finish(lane, batch, decisions, failure);
		}
	}

	/** Takes the next batch (or frees the lane), then answers the calls of the batch that came back. */
	private List<Call> finish(Lane lane, List<Call> sent, List<Decision> decisions, Throwable failure) {
		List<Call> next = null;
		synchronized (lane) {
			while (!lane.waiting.isEmpty() && (next == null || next.size() < this.maxBatch)) {
				Call call = lane.waiting.poll();
				if (!call.future.isDone()) {
					if (next == null) {
						next = new ArrayList<>(Math.min(lane.waiting.size() + 1, this.maxBatch));
					}
					next.add(call);
				}
			}
			if (next == null) {
				lane.busy = false;
				lane.closed = true;
				this.lanes.remove(lane.key, lane);
			}
		}
		if (failure == null && (decisions == null || decisions.size() != sent.size())) {
			failure = new BackendException("the limiter script answered " + ((decisions != null) ? decisions.size() : 0)
					+ " decisions for " + sent.size() + " calls on " + lane.key, null);
		}
		for (int i = 0; i < sent.size(); i++) {
			if (failure != null) {
				sent.get(i).future.completeExceptionally(failure);
			}
			else {
				sent.get(i).future.complete(decisions.get(i));
			}
		}
		return next;
	}

	/**
	 * One caller's decision.
	 * @param request the request
	 * @param operation ACQUIRE, CHECK or SHADOW
	 * @param future completed with the caller's decision
	 */
	record Call(LimitRequest request, Operation operation, CompletableFuture<Decision> future) {
	}

	private static final class Lane {

		final String key;

		final ArrayDeque<Call> waiting = new ArrayDeque<>();

		boolean busy;

		/** Removed from the map: a caller that still found it must look again. */
		boolean closed;

		Lane(String key) {
			this.key = key;
		}

	}

}
