package io.github.limiter.backend.redis;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BiConsumer;
import java.util.function.Function;
import java.util.function.IntSupplier;
import java.util.function.Supplier;
import java.util.function.ToIntFunction;

import io.github.limiter.Decision;
import io.github.limiter.LimitRequest;
import io.github.limiter.Operation;
import io.github.limiter.spi.BackendException;

/**
 * Coalesces the decisions this JVM has in flight at once on one Redis connection: one lane per cluster slot (on a
 * standalone Redis, one lane). A few script calls per lane are in flight (up to four; a second or later one only while
 * those in flight hold fewer than {@link #MAX_CALLS_IN_FLIGHT} calls); calls that arrive meanwhile wait in the lane
 * and go together in the next script call, which decides each of them in arrival order, on whatever keys and limits
 * ({@code decide.lua}). Every caller still gets its own exact decision; many callers cost one round trip and one
 * script run per batch instead of one per call, and a call that finds nothing in flight goes straight out.
 *
 * <p>A lane holds at most {@code maxWaiting} calls: beyond that (Redis not answering, say), a call fails at once with
 * a {@link BackendException}, which the failure policy answers, so that a stalled connection cannot pile up work to
 * replay. Calls whose future was completed by someone else (cancelled) while waiting are dropped, not sent. A batch in
 * flight holds its lane only while one of its callers still waits for it: once every one of them has given up (the
 * guard's deadline), the next batch goes out. A script call sent to a master that died stays pending in the client
 * until the client's own timeout (a minute, by default, in Lettuce), and must not hold the lane that long: the replica
 * promoted meanwhile would get nothing to decide.
 *
 * <p>Once a reply has come on the client's own writing thread (a Netty event loop: {@link
 * RedisScriptExecutor#connectionThread()}), batches are taken and sent there: a call joins the queue and, unless one
 * is pending, schedules a task on that thread that sends what waits, and a reply that frees a slot sends what waits
 * at once, before its own callers are answered. The task runs behind whatever other threads handed the client before
 * it was scheduled (a reset a caller sends after its decision goes after it), and nothing sends from elsewhere, so
 * batches keep their order whatever is in flight. (A reply can send a decision ahead of a reset or refund that the
 * same caller handed the client just before, without waiting for it, while it still waits for that thread: the
 * decision then sees the state before the reset, and errs towards refusing.) Taken on that thread, a batch holds the
 * calls that arrived until it ran: with Redis on a core of its own, 8 callers on 10,000 keys made 0.84-0.86x the floor
 * this way against 0.75-0.80x with batches taken by the callers, on a hot key 0.91-0.94x against 0.82-0.84x, and
 * Redis spent 24-40% less per decision (docs/benchmarks.md, "Batches taken on the connection's thread"). Before the
 * first such reply, and on clients without one, callers take and send batches themselves.
 *
 * <p>A lane that serves few callers (at most {@link #MAX_CALLS_IN_FLIGHT} out at once, lately) and may have more
 * than one batch in flight sends what waits when nothing is in flight as two batches, one right behind the other: the
 * callers one reply answers call again together, and as one batch they would leave Redis idle while this JVM answers
 * them and this JVM idle while Redis decides. With Redis on a core of its own, 8 callers on 10,000 keys made
 * 1.00-1.03x the floor this way against 0.87-0.93x (means of six rounds), and 64 callers, where the lane never splits,
 * what they made before (docs/benchmarks.md, "Two batches for few callers").
 *
 * <p>Lanes take no lock: a call joins the lane's queue, and whoever finds a free slot and nobody sending (a
 * compare-and-set) sends what the queue holds, in order. An idle lane (nothing in flight, waiting, being sent or
 * being answered) leaves the map; a caller that still reaches it is served by it all the same, so two lanes of one slot
 * may briefly both have calls in flight, which costs a little coalescing and may let calls that arrive at that very
 * moment go out in another order, never correctness (every script call is atomic and exact).
 */
final class SlotLanes {

	/**
	 * Beyond one batch, a lane sends another only while fewer calls than this are in flight: with few callers, a call
	 * goes out at once instead of waiting a round trip while Redis sits idle; with many, the next calls wait for one
	 * large batch, which costs Redis less per decision than several small ones (on 10,000 keys at 64 callers,
	 * 1.31-1.45x the floor against 1.09-1.28x without this bound; docs/benchmarks.md).
	 */
	static final int MAX_CALLS_IN_FLIGHT = 16;

	private final ConcurrentHashMap<Integer, Lane> lanes = new ConcurrentHashMap<>();

	private final Function<List<Call>, CompletionStage<List<Decision>>> sender;

	private final ToIntFunction<String> slot;

	private final int maxBatch;

	private final int maxWaiting;

	private final IntSupplier maxInFlight;

	private final BiConsumer<Call, Decision> orphaned;

	/** Asked on a reply's thread: the client's writing thread, or {@code null}. */
	private final Supplier<Executor> connectionThread;

	/** Batches in flight per lane when they are taken on the connection's thread. */
	private final int maxInFlightThere;

	/** The client's writing thread, once a reply came on it: batches are taken there from then on. */
	private volatile Executor thread;

	/**
	 * Creates lanes.
	 * @param sender sends one batch of calls, all on keys of one lane, and answers one decision per call, in order
	 * @param slot the lane of a key: its cluster slot, or always the same number on a standalone Redis
	 * @param maxBatch at most this many calls per script call
	 * @param maxWaiting at most this many calls waiting per lane
	 * @param maxInFlight at most this many script calls in flight per lane when a caller sends, asked each time (the
	 * client may keep the order of calls only once connected, and only for calls sent from some threads)
	 * @param orphaned told of each admission that came back after its caller had stopped waiting (and so never learns
	 * it), so that its permits can be given back
	 * @param connectionThread asked on the thread that delivered a reply: the client's writing thread's executor, where
	 * batches are then taken and sent, or {@code null} ({@link RedisScriptExecutor#connectionThread()})
	 * @param maxInFlightThere at most this many script calls in flight per lane when batches are taken there
	 */
	SlotLanes(Function<List<Call>, CompletionStage<List<Decision>>> sender, ToIntFunction<String> slot, int maxBatch,
			int maxWaiting, IntSupplier maxInFlight, BiConsumer<Call, Decision> orphaned,
			Supplier<Executor> connectionThread, int maxInFlightThere) {
		this.sender = sender;
		this.slot = slot;
		this.maxBatch = maxBatch;
		this.maxWaiting = maxWaiting;
		this.maxInFlight = maxInFlight;
		this.orphaned = orphaned;
		this.connectionThread = connectionThread;
		this.maxInFlightThere = maxInFlightThere;
	}

	/**
	 * Decides one call, alone or with the other calls in flight on its lane, and completes its future.
	 * @param call the call
	 */
	void submit(Call call) {
		String key = call.key();
		Integer slot = this.slot.applyAsInt(key);
		Lane lane = this.lanes.get(slot);
		if (lane == null) {
			lane = this.lanes.computeIfAbsent(slot, Lane::new);
		}
		if (lane.size.incrementAndGet() > this.maxWaiting) {
			lane.size.decrementAndGet();
			call.future.completeExceptionally(new BackendException(this.maxWaiting
					+ " decisions are already waiting for Redis (cluster slot " + slot + ")", null));
			return;
		}
		lane.waiting.add(call);
		Executor thread = this.thread;
		if (thread != null) {
			schedule(lane, thread);
		}
		else {
			pump(lane, false);
		}
	}

	/**
	 * Has the connection's thread take what waits, in a task, unless a task of this lane is pending there already (it
	 * takes whatever arrived before it runs).
	 */
	private void schedule(Lane lane, Executor thread) {
		if (!lane.scheduled.compareAndSet(false, true)) {
			return;
		}
		try {
			thread.execute(() -> {
				lane.scheduled.set(false);
				pump(lane, this.maxInFlightThere);
			});
		}
		catch (RejectedExecutionException ex) {
			// The client shut its event loop down: back to sending from callers.
			this.thread = null;
			lane.scheduled.set(false);
			pump(lane, false);
		}
	}

	/**
	 * Sends batches while the lane has calls waiting and a free slot. One thread at a time takes and sends them, so
	 * that batches reach the client in the order their calls arrived; a thread that finds another one sending leaves
	 * it its calls, and the sender looks at the queue again after letting go. Whoever frees a slot pumps again, so no
	 * call is left behind: a caller that found all slots taken was queued before a holder gives its slot back and
	 * looks.
	 *
	 * <p>A batch sent on a reply goes out only when nothing else is in flight (nothing a caller still waits for: a
	 * batch whose callers all gave up no longer counts, and its admissions are given back whatever its place). The
	 * thread that delivers a reply is usually the connection's own (Lettuce's event loop), and a client writes what
	 * that thread sends at once, ahead of calls other threads handed it earlier that still wait for that thread: with
	 * several batches in flight, a batch sent from there could overtake one a caller had just sent. The calls left
	 * waiting go with the next caller to arrive, or on the reply that empties the lane.
	 * @param onReply whether this runs on the thread that delivered a reply
	 */
	private void pump(Lane lane, boolean onReply) {
		pump(lane, maxInFlight(onReply));
	}

	/**
	 * Takes and sends batches, one thread at a time, while fewer than {@code max} are in flight (and fewer than
	 * {@link #MAX_CALLS_IN_FLIGHT} calls, beyond the first).
	 */
	private void pump(Lane lane, int max) {
		while (!lane.waiting.isEmpty() && lane.free(max) && lane.sending.compareAndSet(false, true)) {
			try {
				List<Call> batch;
				// At most one split per pass: a batch answered at once (a failure) leaves nothing in flight again.
				int size = batchSize(lane, max);
				while (lane.free(max) && (batch = poll(lane, size)) != null) {
					lane.inFlight.incrementAndGet();
					lane.callsInFlight.addAndGet(batch.size());
					send(lane, batch);
					size = this.maxBatch;
				}
			}
			finally {
				lane.sending.set(false);
			}
		}
		leaveIfIdle(lane);
	}

	/**
	 * Takes an idle lane (nothing in flight, waiting, being sent or being answered) out of the map. A caller that still
	 * holds it is served by it all the same. (A lane whose calls another thread is about to send stays: the next calls
	 * of their callers must queue behind them. A lane whose reply is being answered stays too: its callers call again
	 * into the lane that knows how many they are.)
	 */
	private void leaveIfIdle(Lane lane) {
		if (lane.inFlight.get() == 0 && lane.waiting.isEmpty() && !lane.sending.get() && !lane.scheduled.get()
				&& lane.answering.get() == 0) {
			this.lanes.remove(lane.slot, lane);
		}
	}

	/**
	 * After a slot came back, whatever waits goes out: at once on the connection's thread (a reply's, usually: the next
	 * batch is written before this one's callers are answered), else in a task of that thread once it is known, else
	 * as before it was.
	 * @param onReply whether this runs on the thread that delivered a reply
	 * @param onConnectionThread whether that thread is the connection's
	 */
	private void slotFreed(Lane lane, boolean onReply, boolean onConnectionThread) {
		Executor there = this.thread;
		if (there != null && onConnectionThread) {
			pump(lane, this.maxInFlightThere);
		}
		else if (there != null && !lane.waiting.isEmpty()) {
			schedule(lane, there);
		}
		else if (there != null) {
			leaveIfIdle(lane);
		}
		else if (onReply) {
			pump(lane, true);
		}
		else {
			ForkJoinPool.commonPool().execute(() -> pump(lane, false));
		}
	}

	/** Batches a lane may have in flight, asked before each batch: the client's answer changes as it connects. */
	private int maxInFlight(boolean onReply) {
		return onReply ? 1 : this.maxInFlight.getAsInt();
	}

	/**
	 * How many waiting calls the next batch takes: all of them, up to {@code maxBatch}; but when the lane serves few
	 * callers, nothing is in flight and a second batch may follow at once, the first half of what waits, and the rest
	 * right behind it. A few callers answered by one reply call again together, and as one batch they leave Redis idle
	 * while this JVM answers them, and this JVM idle while Redis decides; as two, Redis decides the second while this JVM
	 * answers the first one's callers. Both go out from this thread, in order, so calls keep their order.
	 *
	 * <p>With many callers the lane never splits: Redis is busy anyway, and smaller batches cost it more per decision.
	 * The lane's crowd tells the two apart: the most calls it had out at once (waiting, in flight, or being answered)
	 * whenever it took what waits, less one each time since, so that a moment with few calls out among many callers
	 * does not count as few callers. Asked once per pass of the sending thread, so at most one split per pass.
	 */
	private int batchSize(Lane lane, int max) {
		int waiting = lane.size.get();
		int out = waiting + lane.callsInFlight.get() + lane.answering.get();
		lane.crowd = Math.max(out, lane.crowd - 1);
		if (max < 2 || waiting < 2 || lane.crowd > MAX_CALLS_IN_FLIGHT || lane.inFlight.get() != 0) {
			return this.maxBatch;
		}
		return Math.min(this.maxBatch, (waiting + 1) / 2);
	}

	/** Up to {@code limit} waiting calls that nobody gave up on, or {@code null}. */
	private List<Call> poll(Lane lane, int limit) {
		List<Call> batch = null;
		Call call;
		while ((batch == null || batch.size() < limit) && (call = lane.waiting.poll()) != null) {
			lane.size.decrementAndGet();
			if (!call.future.isDone()) {
				if (batch == null) {
					batch = new ArrayList<>();
				}
				batch.add(call);
			}
		}
		return batch;
	}

	/**
	 * Sends one batch, holding one of the lane's slots until its answer. The next batches go out before this one's
	 * callers run their continuations.
	 */
	private void send(Lane lane, List<Call> batch) {
		CompletableFuture<List<Decision>> reply;
		try {
			reply = this.sender.apply(batch).toCompletableFuture();
		}
		catch (RuntimeException ex) {
			reply = CompletableFuture.failedFuture(ex);
		}
		if (reply.isDone()) {
			// Answered at once (a failure, or a blocking client): the pump that sent it goes on.
			lane.inFlight.decrementAndGet();
			lane.callsInFlight.addAndGet(-batch.size());
			answer(lane, batch, reply);
			return;
		}
		CompletableFuture<List<Decision>> answered = reply;
		Held held = new Held(lane, batch.size());
		reply.whenComplete((decisions, failure) -> {
			lane.answering.addAndGet(batch.size());
			try {
				held.replied();
				answer(lane, batch, answered);
			}
			finally {
				lane.answering.addAndGet(-batch.size());
				leaveIfIdle(lane);
			}
		});
		for (Call call : batch) {
			call.future.whenComplete((decision, failure) -> held.answeredOrGaveUp());
		}
	}

	/**
	 * A lane's slot, held by one batch in flight until its reply or until every one of its callers has given up,
	 * whichever comes first: the slot is given back once.
	 */
	private final class Held {

		private final Lane lane;

		/** Callers still waiting; 0 once the slot is given back. */
		private final AtomicInteger waiting;

		private final int calls;

		Held(Lane lane, int callers) {
			this.lane = lane;
			this.waiting = new AtomicInteger(callers);
			this.calls = callers;
		}

		private void giveBack() {
			this.lane.callsInFlight.addAndGet(-this.calls);
			this.lane.inFlight.decrementAndGet();
		}

		/**
		 * The reply came: a reply on the connection's thread makes it the lane's sender from now on; the slot goes back
		 * (unless every caller had given up already), and what waits is sent: at once on the connection's thread,
		 * and, from a lane whose callers still send, only if nothing else is in flight.
		 */
		void replied() {
			Executor here = SlotLanes.this.connectionThread.get();
			if (here != null) {
				SlotLanes.this.thread = here;
			}
			if (this.waiting.getAndSet(0) > 0) {
				giveBack();
				slotFreed(this.lane, true, here != null);
			}
		}

		/**
		 * A caller got its answer or gave up. When the last one gives up before the reply, the slot goes back, and
		 * what waits is sent from another thread: this runs on whatever completed their futures, which for the
		 * guard's deadline is a thread that fails the calls past their deadline, all of a tick in turn.
		 */
		void answeredOrGaveUp() {
			if (this.waiting.decrementAndGet() == 0) {
				giveBack();
				slotFreed(this.lane, false, false);
			}
		}

	}

	private void answer(Lane lane, List<Call> sent, CompletableFuture<List<Decision>> reply) {
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
		answer(lane, sent, decisions, failure);
	}

	/** Answers the calls of a batch that came back. */
	private void answer(Lane lane, List<Call> sent, List<Decision> decisions, Throwable failure) {
		if (failure == null && (decisions == null || decisions.size() != sent.size())) {
			failure = new BackendException("the limiter script answered " + ((decisions != null) ? decisions.size() : 0)
					+ " decisions for " + sent.size() + " calls", null);
		}
		for (int i = 0; i < sent.size(); i++) {
			if (failure != null) {
				sent.get(i).future.completeExceptionally(failure);
			}
			else {
				Call call = sent.get(i);
				Decision decision = decisions.get(i);
				if (!call.future.complete(decision) && call.operation.acquires() && decision.allowed()) {
					this.orphaned.accept(call, decision);
				}
			}
		}
	}

	/**
	 * One caller's decision.
	 * @param key the Redis key
	 * @param request the request
	 * @param operation ACQUIRE, CHECK or SHADOW
	 * @param future completed with the caller's decision
	 */
	record Call(String key, LimitRequest request, Operation operation, CompletableFuture<Decision> future) {
	}

	private static final class Lane {

		final Integer slot;

		final ConcurrentLinkedQueue<Call> waiting = new ConcurrentLinkedQueue<>();

		/** Calls queued or being taken: bounds the queue. */
		final AtomicInteger size = new AtomicInteger();

		/** Batches of this lane in flight. */
		final AtomicInteger inFlight = new AtomicInteger();

		/** Calls in the batches in flight. */
		final AtomicInteger callsInFlight = new AtomicInteger();

		/** Held by the one thread taking and sending batches. */
		final AtomicBoolean sending = new AtomicBoolean();

		/** Whether a task of this lane is pending on the connection's thread. */
		final AtomicBoolean scheduled = new AtomicBoolean();

		/** Calls of a reply being answered: still out, as the callers will call again. */
		final AtomicInteger answering = new AtomicInteger();

		/**
		 * The most calls out at once (waiting, in flight, being answered) when the lane took what waits, less one each
		 * time since: about how many callers the lane serves. Read and written only while holding {@link #sending}.
		 */
		int crowd;

		Lane(Integer slot) {
			this.slot = slot;
		}

		/**
		 * Whether another batch may go out: always when nothing is in flight; else while fewer than {@code max}
		 * batches and fewer than {@link #MAX_CALLS_IN_FLIGHT} calls are.
		 */
		boolean free(int max) {
			int batches = this.inFlight.get();
			return batches == 0 || (batches < max && this.callsInFlight.get() < MAX_CALLS_IN_FLIGHT);
		}

	}

}
