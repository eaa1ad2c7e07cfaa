package io.github.limiter.guard;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

import org.junit.jupiter.api.Test;

import io.github.limiter.Decision;
import io.github.limiter.testsupport.StubBackend;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A JVM short of CPU may not run its Redis client's thread for seconds while Redis answers every call in time: the
 * probes get no answer, and the circuit opens on their silence. When the answers are read after all, the circuit
 * closes at once, not after its open period: the backend was alive, and its decisions are its own again.
 */
class LateAnswerTests {

	private static final Duration OPEN_FOR_LONG = Duration.ofMinutes(10);

	@Test
	void aCircuitOpenedOnSilenceClosesAsSoonAsTheAnswersAreReadAfterAll() throws Exception {
		AtomicBoolean starved = new AtomicBoolean();
		List<CompletableFuture<Decision>> unread = new CopyOnWriteArrayList<>();
		StubBackend backend = new StubBackend(requests -> {
			Decision decision = Decision.of(requests.get(0).limit().name(), true, 1, 1, 0, 0, 0, 0, null);
			if (!starved.get()) {
				return CompletableFuture.completedFuture(decision);
			}
			CompletableFuture<Decision> answer = new CompletableFuture<>();
			unread.add(answer);
			return answer;
		}) {
		};
		List<String> infos = new CopyOnWriteArrayList<>();
		Handler handler = new Handler() {

			@Override
			public void publish(LogRecord record) {
				if (record.getLevel() == Level.INFO) {
					infos.add(record.getMessage());
				}
			}

			@Override
			public void flush() {
			}

			@Override
			public void close() {
			}

		};
		Logger logger = Logger.getLogger(GuardedBackend.class.getName());
		logger.addHandler(handler);
		try (GuardedBackend guard = GuardedBackend.builder(backend)
			.deadline(Duration.ofMillis(100))
			.maxDeadline(Duration.ofMillis(200))
			.heartbeat(Duration.ofMillis(50))
			.openDuration(OPEN_FOR_LONG)
			.build()) {
			awaitState(guard, CircuitBreaker.State.CLOSED);
			Thread.sleep(300);
			starved.set(true);
			awaitState(guard, CircuitBreaker.State.OPEN);
			assertThat(unread).as("the probes whose silence opened it").hasSizeGreaterThanOrEqualTo(2);
			// The client's thread runs again and reads what Redis had answered meanwhile.
			starved.set(false);
			unread.forEach(answer -> answer.complete(Decision.of("limiter-probe", true, 1, 1, 0, 0, 0, 0, null)));
			awaitState(guard, CircuitBreaker.State.CLOSED);
			assertThat(guard.breaker().inStateFor()).as("closed long before the open period's end")
				.isLessThan(OPEN_FOR_LONG);
			assertThat(infos).anySatisfy((message) -> assertThat(message)
				.startsWith("Rate limiter backend answered after all, ")
				.contains(" ms after its silence opened the circuit: circuit closed")
				.doesNotContain("circuit open"));

			// Silence again within an open period of that close: a backend that keeps pausing, not a JVM that was
			// starved once. Only a probe closes the circuit now, as for any outage, so that it does not flap.
			unread.clear();
			starved.set(true);
			awaitState(guard, CircuitBreaker.State.OPEN);
			starved.set(false);
			unread.forEach(answer -> answer.complete(Decision.of("limiter-probe", true, 1, 1, 0, 0, 0, 0, null)));
			Thread.sleep(500);
			assertThat(guard.breaker().state()).as("open until its open period ends").isEqualTo(CircuitBreaker.State.OPEN);
		}
		finally {
			logger.removeHandler(handler);
		}
	}

	@Test
	void aCloseOnALateAnswerIsLoggedAfterTheOpeningItUndoes() throws Exception {
		// The starved JVM's two threads get the CPU back at once: the answers are read as the circuit opens.
		AtomicBoolean starved = new AtomicBoolean();
		List<CompletableFuture<Decision>> unread = new CopyOnWriteArrayList<>();
		StubBackend backend = new StubBackend(requests -> {
			Decision decision = Decision.of(requests.get(0).limit().name(), true, 1, 1, 0, 0, 0, 0, null);
			if (!starved.get()) {
				return CompletableFuture.completedFuture(decision);
			}
			CompletableFuture<Decision> answer = new CompletableFuture<>();
			unread.add(answer);
			return answer;
		}) {
		};
		List<String> lines = new CopyOnWriteArrayList<>();
		Handler handler = new Handler() {

			@Override
			public void publish(LogRecord record) {
				if (record.getMessage().contains("circuit open,")) {
					lines.add("open");
				}
				else if (record.getMessage().startsWith("Rate limiter backend answered after all")) {
					lines.add("closed");
				}
			}

			@Override
			public void flush() {
			}

			@Override
			public void close() {
			}

		};
		Logger logger = Logger.getLogger(GuardedBackend.class.getName());
		logger.addHandler(handler);
		try (GuardedBackend guard = GuardedBackend.builder(backend)
			.deadline(Duration.ofMillis(50))
			.maxDeadline(Duration.ofMillis(100))
			.heartbeat(Duration.ofMillis(20))
			.openDuration(Duration.ofSeconds(1))
			.build()) {
			awaitState(guard, CircuitBreaker.State.CLOSED);
			for (int cycle = 0; cycle < 6; cycle++) {
				// An open period after the last close on a late answer, so that this silence may be undone too.
				Thread.sleep(1_100);
				lines.clear();
				unread.clear();
				starved.set(true);
				long giveUp = System.nanoTime() + Duration.ofSeconds(30).toNanos();
				while (guard.breaker().isClosed() && System.nanoTime() < giveUp) {
					Thread.onSpinWait();
				}
				starved.set(false);
				unread.forEach(answer -> answer.complete(Decision.of("limiter-probe", true, 1, 1, 0, 0, 0, 0, null)));
				awaitState(guard, CircuitBreaker.State.CLOSED);
				assertThat(lines).as("cycle %d", cycle).containsExactly("open", "closed");
			}
		}
		finally {
			logger.removeHandler(handler);
		}
	}

	@Test
	void aCircuitOpenedOnSilenceStaysOpenWhileNothingIsAnswered() throws Exception {
		List<CompletableFuture<Decision>> unread = new CopyOnWriteArrayList<>();
		StubBackend silent = new StubBackend(requests -> {
			CompletableFuture<Decision> answer = new CompletableFuture<>();
			unread.add(answer);
			return answer;
		}) {
		};
		try (GuardedBackend guard = GuardedBackend.builder(silent)
			.deadline(Duration.ofMillis(100))
			.maxDeadline(Duration.ofMillis(200))
			.heartbeat(Duration.ofMillis(50))
			.openDuration(OPEN_FOR_LONG)
			.build()) {
			awaitState(guard, CircuitBreaker.State.OPEN);
			Thread.sleep(500);
			assertThat(guard.breaker().state()).isEqualTo(CircuitBreaker.State.OPEN);
			// Answers that fail are no sign of life.
			unread.forEach(answer -> answer.completeExceptionally(new IllegalStateException("connection reset")));
			Thread.sleep(500);
			assertThat(guard.breaker().state()).isEqualTo(CircuitBreaker.State.OPEN);
		}
	}

	private static void awaitState(GuardedBackend guard, CircuitBreaker.State state) throws InterruptedException {
		long giveUp = System.nanoTime() + Duration.ofSeconds(60).toNanos();
		while (guard.breaker().state() != state && System.nanoTime() < giveUp) {
			Thread.sleep(10);
		}
		assertThat(guard.breaker().state()).isEqualTo(state);
	}

}
