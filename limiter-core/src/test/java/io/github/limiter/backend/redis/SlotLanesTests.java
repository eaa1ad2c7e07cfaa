package io.github.limiter.backend.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import java.util.stream.IntStream;

import org.junit.jupiter.api.Test;

import io.github.limiter.Decision;
import io.github.limiter.LimitRequest;
import io.github.limiter.Operation;
import io.github.limiter.algorithm.TokenBucket;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The lanes that coalesce calls in flight: a batch holds its lane while one of its callers still waits for it.
 */
class SlotLanesTests {

	private final LimitRequest request = LimitRequest.of(TokenBucket.of("lanes", 10, Duration.ofSeconds(1)), "k");

	/** Each batch sent, with the reply the test completes (or never does). */
	private final List<CompletableFuture<List<Decision>>> replies = new CopyOnWriteArrayList<>();

	private final List<List<SlotLanes.Call>> sent = new CopyOnWriteArrayList<>();

	/** The thread that sent each batch. */
	private final List<Thread> senders = new CopyOnWriteArrayList<>();

	/** One script call in flight per lane. */
	private final SlotLanes lanes = recordingLanes(1);

	/** The keys of admissions that came back after their caller had stopped waiting. */
	private final List<String> orphans = new CopyOnWriteArrayList<>();

	/** Tasks handed to the client's writing thread of {@link #connectionLanes()}, which the test runs. */
	private final List<Runnable> tasks = new ArrayList<>();

	/** Whether a reply comes on that thread. */
	private boolean onConnectionThread;

	@Test
	void callsArrivingWhileABatchIsInFlightWaitAndGoTogether() {
		CompletableFuture<Decision> first = submit(this.lanes, "k1");
		CompletableFuture<Decision> second = submit(this.lanes, "k2");
		CompletableFuture<Decision> third = submit(this.lanes, "k3");
		assertThat(this.sent).as("one batch in flight, the others wait").hasSize(1);

		this.replies.get(0).complete(List.of(admitted()));
		assertThat(first).isCompleted();
		assertThat(this.sent).hasSize(2);
		assertThat(this.sent.get(1)).extracting(SlotLanes.Call::key).containsExactly("k2", "k3");
		assertThat(second).isNotDone();
		assertThat(third).isNotDone();
	}

	@Test
	void aBatchWhoseCallersAllGaveUpNoLongerHoldsTheLane() {
		// A script call sent to a master that died: its reply comes only when the client times out, a minute later.
		CompletableFuture<Decision> lost = submit(this.lanes, "k1");
		CompletableFuture<Decision> waiting = submit(this.lanes, "k2");
		assertThat(this.sent).hasSize(1);

		lost.completeExceptionally(new TimeoutException("the guard's deadline"));

		eventually(() -> assertThat(this.sent).as("the next batch goes out as soon as nobody waits for the lost one")
			.hasSize(2));
		assertThat(this.sent.get(1)).extracting(SlotLanes.Call::key).containsExactly("k2");
		// Not on the thread that gave up: for the guard's deadline that is the thread that fails every call of a
		// tick past its deadline, which must never wait for a connection.
		assertThat(this.senders.get(1)).isNotSameAs(Thread.currentThread());
		this.replies.get(1).complete(List.of(admitted()));
		assertThat(waiting).isCompletedWithValueMatching(Decision::allowed);

		// The lost reply, when it finally comes, gives back no slot twice: one batch in flight at a time still.
		CompletableFuture<Decision> later = submit(this.lanes, "k3");
		CompletableFuture<Decision> queued = submit(this.lanes, "k4");
		this.replies.get(0).complete(List.of(admitted()));
		assertThat(this.sent).as("k3 in flight, k4 waiting for it").hasSize(3);
		assertThat(later).isNotDone();
		assertThat(queued).isNotDone();
		assertThat(this.orphans).as("the admission nobody waited for, to be given back").containsExactly("k1");
	}

	@Test
	void aBatchHoldsTheLaneWhileOneOfItsCallersStillWaits() {
		submit(this.lanes, "k0");
		CompletableFuture<Decision> gaveUp = submit(this.lanes, "k1");
		CompletableFuture<Decision> patient = submit(this.lanes, "k2");
		this.replies.get(0).complete(List.of(admitted()));
		assertThat(this.sent).hasSize(2);
		CompletableFuture<Decision> next = submit(this.lanes, "k3");

		gaveUp.completeExceptionally(new TimeoutException("the guard's deadline"));

		assertThat(this.sent).as("k2's caller still waits for the batch in flight").hasSize(2);
		this.replies.get(1).complete(List.of(admitted(), admitted()));
		assertThat(patient).isCompletedWithValueMatching(Decision::allowed);
		assertThat(this.sent).hasSize(3);
		assertThat(next).isNotDone();
		assertThat(this.orphans).containsExactly("k1");
	}

	@Test
	void batchesReachTheClientInTheOrderTheirCallsArrivedThoughSeveralThreadsSendThem() throws Exception {
		// Keys in the order the client was handed them, by four threads calling at once, four batches in flight.
		List<String> received = new CopyOnWriteArrayList<>();
		List<CompletableFuture<List<Decision>>> pending = new CopyOnWriteArrayList<>();
		SlotLanes parallel = new SlotLanes(batch -> {
			batch.forEach(call -> received.add(call.key()));
			CompletableFuture<List<Decision>> reply = new CompletableFuture<>();
			pending.add(reply);
			// Answered on another thread, as a client's event loop answers: the next batch may go out before.
			CompletableFuture.runAsync(() -> reply.complete(batch.stream().map(call -> admitted()).toList()));
			return reply;
		}, key -> 0, 8, 100_000, () -> 4, (call, decision) -> {
		}, () -> null, 4);
		callFromFourThreadsAtOnce(parallel);

		assertEachThreadsCallsArrivedInOrder(received);
		assertThat(pending).as("calls shared batches").hasSizeLessThan(THREADS * CALLS);
	}

	@Test
	void aReplySendsTheNextBatchOnlyWhenNothingElseIsInFlightWhileCallersSendUpToTheLimit() {
		SlotLanes four = recordingLanes(4);
		for (int i = 0; i < 6; i++) {
			submit(four, "k" + i);
		}
		assertThat(this.sent).as("four calls go alone, two wait").hasSize(4);

		// A reply's thread is usually the connection's, whose writes overtake those other threads handed it before.
		this.replies.get(0).complete(List.of(admitted()));
		this.replies.get(1).complete(List.of(admitted()));
		assertThat(this.sent).as("two batches still in flight: nothing sent on a reply").hasSize(4);

		submit(four, "k6");
		assertThat(this.sent).as("a caller sends what waits, with its own call").hasSize(5);
		assertThat(this.sent.get(4)).extracting(SlotLanes.Call::key).containsExactly("k4", "k5", "k6");

		submit(four, "k7");
		submit(four, "k8");
		assertThat(this.sent).as("k7 in the fourth slot, k8 waits").hasSize(6);
		this.replies.get(2).complete(List.of(admitted()));
		this.replies.get(3).complete(List.of(admitted()));
		this.replies.get(4).complete(List.of(admitted(), admitted(), admitted()));
		assertThat(this.sent).as("k7 still in flight").hasSize(6);
		this.replies.get(5).complete(List.of(admitted()));
		assertThat(this.sent).as("the reply that empties the lane sends what waits").hasSize(7);
		assertThat(this.sent.get(6)).extracting(SlotLanes.Call::key).containsExactly("k8");
	}

	@Test
	void whileManyCallsAreInFlightTheNextOnesWaitForOneLargeBatchInsteadOfGoingInSmallOnes() {
		SlotLanes four = recordingLanes(4);
		int many = SlotLanes.MAX_CALLS_IN_FLIGHT + 4;
		submit(four, "first");
		for (int i = 0; i < many; i++) {
			submit(four, "a" + i);
		}
		// "first" alone, then one batch per call while few are in flight: a0, a1, a2 fill the four slots.
		assertThat(this.sent).hasSize(4);
		for (int i = 0; i < 4; i++) {
			this.replies.get(i).complete(List.of(admitted()));
		}
		assertThat(this.sent).as("the reply that emptied the lane sent what waited").hasSize(5);
		assertThat(this.sent.get(4)).hasSize(many - 3);

		submit(four, "c");
		submit(four, "d");
		assertThat(this.sent).as("%d calls in flight: c and d wait though three slots are free", many - 3).hasSize(5);
		this.replies.get(4).complete(this.sent.get(4).stream().map(call -> admitted()).toList());
		assertThat(this.sent).hasSize(6);
		assertThat(this.sent.get(5)).extracting(SlotLanes.Call::key).containsExactly("c", "d");
	}

	@Test
	void onceAReplyCameOnTheConnectionsThreadBatchesAreTakenThereAndGoOutWhateverIsInFlight() {
		SlotLanes lanes = connectionLanes();

		submit(lanes, "a");
		assertThat(this.sent).as("no reply yet: the caller sends").hasSize(1);
		replyOnTheConnectionsThread(0);

		submit(lanes, "b");
		submit(lanes, "c");
		submit(lanes, "d");
		assertThat(this.sent).as("the calls wait for the connection's thread").hasSize(1);
		assertThat(this.tasks).as("one task takes whatever arrived before it runs").hasSize(1);
		runAll(this.tasks);
		assertThat(this.sent).hasSize(3);

		submit(lanes, "e");
		runAll(this.tasks);
		assertThat(this.sent).as("two batches in flight: e goes out all the same, behind them").hasSize(4);
		assertThat(this.sent.get(3)).extracting(SlotLanes.Call::key).containsExactly("e");

		for (int i = 1; i <= 3; i++) {
			replyOnTheConnectionsThread(i);
		}
		assertThat(this.tasks).as("nothing waits: the replies schedule nothing").isEmpty();
	}

	@Test
	void withNothingInFlightTheCallsThatWaitGoAsTwoBatchesInTheirOrder() {
		SlotLanes lanes = connectionLanes();
		submit(lanes, "first");
		replyOnTheConnectionsThread(0);

		for (int i = 0; i < 5; i++) {
			submit(lanes, "b" + i);
		}
		runAll(this.tasks);
		// Redis decides the second batch while this JVM answers the first one's callers.
		assertThat(this.sent).hasSize(3);
		assertThat(this.sent.get(1)).extracting(SlotLanes.Call::key).containsExactly("b0", "b1", "b2");
		assertThat(this.sent.get(2)).extracting(SlotLanes.Call::key).containsExactly("b3", "b4");

		replyOnTheConnectionsThread(1);
		replyOnTheConnectionsThread(2);
		int many = SlotLanes.MAX_CALLS_IN_FLIGHT + 4;
		for (int i = 0; i < many; i++) {
			submit(lanes, "c" + i);
		}
		runAll(this.tasks);
		assertThat(this.sent).as("more than the bound of calls in flight: one batch").hasSize(4);
		assertThat(this.sent.get(3)).hasSize(many);

		// Four callers call again while the crowd's batch is out: few calls wait, but the lane serves many callers.
		for (int i = 0; i < 4; i++) {
			submit(lanes, "d" + i);
		}
		replyOnTheConnectionsThread(3);
		runAll(this.tasks);
		assertThat(this.sent).as("after a crowd of callers: what waits goes as one batch").hasSize(5);
		assertThat(this.sent.get(4)).hasSize(4);

		// The crowd thins out: once only these four callers have been served for a while, batches split again.
		int rounds = 0;
		while (this.sent.get(this.sent.size() - 1).size() == 4 && rounds < 2 * SlotLanes.MAX_CALLS_IN_FLIGHT) {
			int last = this.sent.size() - 1;
			for (int i = 0; i < 4; i++) {
				submit(lanes, "e" + rounds + "-" + i);
			}
			replyOnTheConnectionsThread(last);
			runAll(this.tasks);
			rounds++;
		}
		// The crowd was the twenty being answered and the four waiting, and it falls by one each time the lane takes
		// what waits: it splits again at the bound.
		assertThat(rounds).as("rounds of four callers before the lane split again")
			.isEqualTo(many + 4 - SlotLanes.MAX_CALLS_IN_FLIGHT);
		assertThat(this.sent.get(this.sent.size() - 2)).hasSize(2);
		assertThat(this.sent.get(this.sent.size() - 1)).hasSize(2);
	}

	@Test
	void callersBeingAnsweredCountInTheCrowd() {
		SlotLanes lanes = connectionLanes();
		// Callers send (the connection's thread is not known yet): one batch in flight, the next twelve calls wait
		// and go as one batch on its reply.
		submit(lanes, "a");
		for (int i = 0; i < 12; i++) {
			submit(lanes, "b" + i);
		}
		this.replies.get(0).complete(List.of(admitted()));
		assertThat(this.sent).hasSize(2);
		assertThat(this.sent.get(1)).hasSize(12);

		// Six more wait; the twelve are answered on the connection's thread, which sends the six before answering
		// them: six waiting and twelve about to call again are eighteen callers, too many to split for.
		for (int i = 0; i < 6; i++) {
			submit(lanes, "c" + i);
		}
		replyOnTheConnectionsThread(1);
		runAll(this.tasks);
		assertThat(this.sent).hasSize(3);
		assertThat(this.sent.get(2)).extracting(SlotLanes.Call::key)
			.containsExactly("c0", "c1", "c2", "c3", "c4", "c5");
	}

	/**
	 * Lanes whose client's writing thread is {@link #tasks}, which the test runs; a reply comes on that thread
	 * while the flag is set. One batch in flight while callers send, four on that thread.
	 */
	private SlotLanes connectionLanes() {
		Executor connection = this.tasks::add;
		return recordingLanes(1, () -> this.onConnectionThread ? connection : null);
	}

	/** Admits every call of the batch sent {@code index}-th, on the connection's thread. */
	private void replyOnTheConnectionsThread(int index) {
		this.onConnectionThread = true;
		try {
			this.replies.get(index).complete(this.sent.get(index).stream().map(call -> admitted()).toList());
		}
		finally {
			this.onConnectionThread = false;
		}
	}

	@Test
	void batchesTakenOnTheConnectionsThreadKeepTheOrderTheirCallsArrivedIn() throws Exception {
		List<String> received = new CopyOnWriteArrayList<>();
		AtomicInteger inFlight = new AtomicInteger();
		AtomicInteger mostInFlight = new AtomicInteger();
		ExecutorService connection = Executors.newSingleThreadExecutor(runnable -> new Thread(runnable, "connection"));
		Thread[] connectionThread = new Thread[1];
		connection.submit(() -> connectionThread[0] = Thread.currentThread()).get();
		List<Thread> sentFrom = new CopyOnWriteArrayList<>();
		SlotLanes parallel = new SlotLanes(batch -> {
			batch.forEach(call -> received.add(call.key()));
			sentFrom.add(Thread.currentThread());
			mostInFlight.accumulateAndGet(inFlight.incrementAndGet(), Math::max);
			CompletableFuture<List<Decision>> reply = new CompletableFuture<>();
			// Answered on the connection's thread, later, as a client's event loop answers.
			connection.execute(() -> {
				inFlight.decrementAndGet();
				reply.complete(batch.stream().map(call -> admitted()).toList());
			});
			return reply;
		}, key -> 0, 8, 100_000, () -> 4, (call, decision) -> {
		}, () -> (Thread.currentThread() == connectionThread[0]) ? connection : null, 4);
		try {
			callFromFourThreadsAtOnce(parallel);
		}
		finally {
			connection.shutdownNow();
		}

		assertEachThreadsCallsArrivedInOrder(received);
		assertThat(mostInFlight.get()).as("script calls in flight at once").isLessThanOrEqualTo(4);
		assertThat(sentFrom.stream().filter(sender -> sender == connectionThread[0]).count())
			.as("batches sent from the connection's thread, once a reply came on it").isPositive();
	}

	private static final int THREADS = 4;

	private static final int CALLS = 2_000;

	/** Four threads call at once, each {@value #CALLS} times without waiting, keys {@code t<thread>-<i>}. */
	private void callFromFourThreadsAtOnce(SlotLanes lanes) throws Exception {
		CountDownLatch start = new CountDownLatch(1);
		ExecutorService pool = Executors.newFixedThreadPool(THREADS);
		List<CompletableFuture<Void>> callers = new ArrayList<>();
		for (int t = 0; t < THREADS; t++) {
			String thread = "t" + t + "-";
			callers.add(CompletableFuture.runAsync(() -> {
				try {
					start.await();
				}
				catch (InterruptedException ex) {
					Thread.currentThread().interrupt();
				}
				List<CompletableFuture<Decision>> answers = new ArrayList<>();
				for (int i = 0; i < CALLS; i++) {
					answers.add(submit(lanes, thread + i));
				}
				answers.forEach(CompletableFuture::join);
			}, pool));
		}
		start.countDown();
		try {
			CompletableFuture.allOf(callers.toArray(CompletableFuture[]::new)).get(60, TimeUnit.SECONDS);
		}
		finally {
			pool.shutdownNow();
		}
	}

	/** The keys the client was handed hold each thread's calls, in the order that thread made them. */
	private static void assertEachThreadsCallsArrivedInOrder(List<String> received) {
		assertThat(received).hasSize(THREADS * CALLS);
		for (int t = 0; t < THREADS; t++) {
			String thread = "t" + t + "-";
			assertThat(received.stream().filter(key -> key.startsWith(thread)).toList()).as("the calls of %s", thread)
				.containsExactlyElementsOf(IntStream.range(0, CALLS).mapToObj(i -> thread + i).toList());
		}
	}

	/** Runs the tasks handed to a connection's thread, and those they hand it, in order. */
	private static void runAll(List<Runnable> tasks) {
		while (!tasks.isEmpty()) {
			tasks.remove(0).run();
		}
	}

	/** Lanes whose batches, replies, senders and orphans this test records; the test completes the replies. */
	private SlotLanes recordingLanes(int maxInFlight) {
		return recordingLanes(maxInFlight, () -> null);
	}

	/** The same, with the client's writing thread as the given supplier tells it on a reply's thread. */
	private SlotLanes recordingLanes(int maxInFlight, Supplier<Executor> connectionThread) {
		return new SlotLanes(batch -> {
			CompletableFuture<List<Decision>> reply = new CompletableFuture<>();
			this.senders.add(Thread.currentThread());
			this.sent.add(batch);
			this.replies.add(reply);
			return reply;
		}, key -> 0, 64, 4096, () -> maxInFlight, (call, decision) -> this.orphans.add(call.key()), connectionThread, 4);
	}

	private CompletableFuture<Decision> submit(SlotLanes lanes, String key) {
		CompletableFuture<Decision> answer = new CompletableFuture<>();
		lanes.submit(new SlotLanes.Call(key, this.request, Operation.ACQUIRE, answer));
		return answer;
	}

	/** Waits up to 10 s for an assertion that another thread makes true. */
	private static void eventually(Runnable assertion) {
		long end = System.nanoTime() + 10_000_000_000L;
		while (true) {
			try {
				assertion.run();
				return;
			}
			catch (AssertionError ex) {
				if (System.nanoTime() > end) {
					throw ex;
				}
				Thread.onSpinWait();
				Thread.yield();
			}
		}
	}

	private static Decision admitted() {
		return Decision.of("lanes", true, 10, 9, 0, 100_000, 0, 1_000_000, null);
	}

}
