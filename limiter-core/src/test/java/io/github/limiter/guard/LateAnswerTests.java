package io.github.limiter.guard;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

import org.junit.jupiter.api.Test;

import io.github.limiter.Decision;
import io.github.limiter.testsupport.StubBackend;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A JVM short of CPU may not run its Redis client's thread for seconds while Redis answers every call in time: the
 * probes get no answer, and the circuit opens on their silence. When the answers are read after all, the circuit
 * closes at once, not after its open period: the backend was alive, and its decisions are its own again. Once per
 * open period: a backend that keeps pausing answers late after every pause too, and must not make the circuit flap.
 */
class LateAnswerTests {

	private static final Duration OPEN_FOR_LONG = Duration.ofMinutes(10);

	@Test
	void aCircuitOpenedOnSilenceClosesAsSoonAsTheAnswersAreReadAfterAll() throws Exception {
		Starvable backend = new Starvable();
		try (GuardLog log = new GuardLog(); GuardedBackend guard = guard(backend, OPEN_FOR_LONG)) {
			awaitState(guard, CircuitBreaker.State.CLOSED);
			Thread.sleep(300);
			backend.starve();
			awaitState(guard, CircuitBreaker.State.OPEN);
			assertThat(backend.unread).as("the probes whose silence opened it").hasSizeGreaterThanOrEqualTo(2);
			// The client's thread runs again and reads what Redis had answered meanwhile.
			backend.feed();
			awaitState(guard, CircuitBreaker.State.CLOSED);
			assertThat(guard.breaker().inStateFor()).as("closed long before the open period's end")
				.isLessThan(OPEN_FOR_LONG);
			long giveUp = System.nanoTime() + Duration.ofSeconds(30).toNanos();
			while (log.lines.stream().noneMatch((line) -> line.contains("answered after all"))
					&& System.nanoTime() < giveUp) {
				Thread.sleep(2);
			}
			assertThat(log.lines).anySatisfy((message) -> assertThat(message)
				.startsWith("Rate limiter backend answered after all, ")
				.contains(" ms after its silence opened the circuit: circuit closed")
				.doesNotContain("circuit open"));

			// Silence again within an open period of that close: a backend that keeps pausing, not a JVM that was
			// starved once. Only a probe closes the circuit now, as for any outage, so that it does not flap.
			backend.starve();
			awaitState(guard, CircuitBreaker.State.OPEN);
			backend.feed();
			Thread.sleep(500);
			assertThat(guard.breaker().state()).as("open until its open period ends").isEqualTo(CircuitBreaker.State.OPEN);
		}
	}

	@Test
	void aCloseOnALateAnswerIsLoggedAfterTheOpeningItUndoes() throws Exception {
		// The starved JVM's two threads get the CPU back at once: the answers are read as the circuit opens.
		Starvable backend = new Starvable();
		try (GuardLog log = new GuardLog(); GuardedBackend guard = guard(backend, Duration.ofSeconds(1))) {
			awaitState(guard, CircuitBreaker.State.CLOSED);
			for (int cycle = 0; cycle < 6; cycle++) {
				// An open period after the last close on a late answer, so that this silence may be undone too.
				Thread.sleep(1_100);
				log.lines.clear();
				backend.starve();
				long giveUp = System.nanoTime() + Duration.ofSeconds(30).toNanos();
				while (guard.breaker().isClosed() && System.nanoTime() < giveUp) {
					Thread.onSpinWait();
				}
				backend.feed();
				awaitState(guard, CircuitBreaker.State.CLOSED);
				// The close is logged just after it is made.
				giveUp = System.nanoTime() + Duration.ofSeconds(30).toNanos();
				while (log.lines.stream().noneMatch((line) -> line.contains("answered after all"))
						&& System.nanoTime() < giveUp) {
					Thread.sleep(2);
				}
				assertThat(log.lines.stream()
					.filter((line) -> line.contains("circuit open,") || line.contains("answered after all"))
					.map((line) -> line.contains("circuit open,") ? "open" : "closed")).as("cycle %d: %s", cycle, log.lines)
					.containsExactly("open", "closed");
			}
		}
	}

	@Test
	void aCircuitOpenedOnSilenceStaysOpenWhileNothingIsAnswered() throws Exception {
		Starvable backend = new Starvable();
		backend.starve();
		try (GuardedBackend guard = guard(backend, OPEN_FOR_LONG)) {
			awaitState(guard, CircuitBreaker.State.OPEN);
			Thread.sleep(500);
			assertThat(guard.breaker().state()).isEqualTo(CircuitBreaker.State.OPEN);
			// Answers that fail are no sign of life.
			backend.unread.forEach(answer -> answer.completeExceptionally(new IllegalStateException("connection reset")));
			Thread.sleep(500);
			assertThat(guard.breaker().state()).isEqualTo(CircuitBreaker.State.OPEN);
		}
	}

	private static GuardedBackend guard(Starvable backend, Duration openDuration) {
		return GuardedBackend.builder(backend)
			.deadline(Duration.ofMillis(50))
			.maxDeadline(Duration.ofMillis(100))
			.heartbeat(Duration.ofMillis(20))
			.openDuration(openDuration)
			.build();
	}

	private static void awaitState(GuardedBackend guard, CircuitBreaker.State state) throws InterruptedException {
		long giveUp = System.nanoTime() + Duration.ofSeconds(60).toNanos();
		while (guard.breaker().state() != state && System.nanoTime() < giveUp) {
			Thread.sleep(2);
		}
		assertThat(guard.breaker().state()).isEqualTo(state);
	}

	/** A backend that answers at once, or, while starved, holds its answers as a client thread without CPU would. */
	static final class Starvable extends StubBackend {

		final List<CompletableFuture<Decision>> unread;

		private final AtomicBoolean starved;

		Starvable() {
			this(new AtomicBoolean(), new CopyOnWriteArrayList<>());
		}

		private Starvable(AtomicBoolean starved, List<CompletableFuture<Decision>> unread) {
			super(requests -> {
				if (!starved.get()) {
					return CompletableFuture.completedFuture(allowed(requests.get(0).limit().name()));
				}
				CompletableFuture<Decision> answer = new CompletableFuture<>();
				unread.add(answer);
				return answer;
			});
			this.starved = starved;
			this.unread = unread;
		}

		void starve() {
			this.unread.clear();
			this.starved.set(true);
		}

		/** The client's thread runs again: what was held is read, and what comes is answered at once. */
		void feed() {
			this.starved.set(false);
			this.unread.forEach(answer -> answer.complete(allowed("limiter-probe")));
		}

		private static Decision allowed(String limit) {
			return Decision.of(limit, true, 1, 1, 0, 0, 0, 0, null);
		}

	}

	/** The guard's log lines, WARN and INFO, while open. */
	static final class GuardLog extends Handler implements AutoCloseable {

		final List<String> lines = new CopyOnWriteArrayList<>();

		private final Logger logger = Logger.getLogger(GuardedBackend.class.getName());

		GuardLog() {
			this.logger.addHandler(this);
		}

		@Override
		public void publish(LogRecord record) {
			this.lines.add(record.getMessage());
		}

		@Override
		public void flush() {
		}

		@Override
		public void close() {
			this.logger.removeHandler(this);
		}

	}

}
