package io.github.limiter.spi;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TransferQueue;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * The pool for blocking calls starts a thread only when none is idle, runs {@value BlockingCalls#THREADS} calls at once,
 * keeps {@value BlockingCalls#WAITING} more waiting, and refuses the next.
 */
class BlockingCallsTests {

	@Test
	void callsOneAfterTheOtherShareOneThread() throws Exception {
		ThreadPoolExecutor pool = (ThreadPoolExecutor) BlockingCalls.pool("test-one-after-the-other");
		try {
			for (int i = 0; i < 50; i++) {
				pool.submit(() -> {
				}).get(30, TimeUnit.SECONDS);
				// The thread that ran the call goes back to waiting for the next one.
				long giveUp = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
				while (!((TransferQueue<Runnable>) pool.getQueue()).hasWaitingConsumer() && System.nanoTime() < giveUp) {
					Thread.sleep(1);
				}
			}
			assertThat(pool.getLargestPoolSize()).as("a heartbeat's calls, never two at once").isEqualTo(1);
		}
		finally {
			pool.shutdownNow();
		}
	}

	@Test
	void aFewCallsThatBlockAllRunAtOnce() throws Exception {
		// Repeated on fresh pools: a thread that has just started, or just taken a call, must not be taken for an
		// idle one, which would leave the next call waiting behind a blocked thread.
		for (int round = 0; round < 20; round++) {
			ExecutorService pool = BlockingCalls.pool("test-few");
			CountDownLatch release = new CountDownLatch(1);
			AtomicInteger running = new AtomicInteger();
			try {
				for (int i = 0; i < 10; i++) {
					pool.execute(() -> {
						running.incrementAndGet();
						try {
							release.await();
						}
						catch (InterruptedException ex) {
							Thread.currentThread().interrupt();
						}
					});
				}
				long giveUp = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
				while (running.get() < 10 && System.nanoTime() < giveUp) {
					Thread.sleep(1);
				}
				assertThat(running.get()).as("round %d", round).isEqualTo(10);
			}
			finally {
				release.countDown();
				pool.shutdownNow();
			}
		}
	}

	@Test
	void callsThatBlockRunSixtyFourAtOnceAndTheRestWaitUpToTheBound() throws Exception {
		ExecutorService pool = BlockingCalls.pool("test-blocking");
		CountDownLatch release = new CountDownLatch(1);
		AtomicInteger running = new AtomicInteger();
		AtomicInteger done = new AtomicInteger();
		try {
			Runnable blocking = () -> {
				running.incrementAndGet();
				try {
					release.await();
				}
				catch (InterruptedException ex) {
					Thread.currentThread().interrupt();
				}
				done.incrementAndGet();
			};
			for (int i = 0; i < BlockingCalls.THREADS + BlockingCalls.WAITING; i++) {
				pool.execute(blocking);
			}
			long giveUp = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
			while (running.get() < BlockingCalls.THREADS && System.nanoTime() < giveUp) {
				Thread.sleep(5);
			}
			assertThat(running.get()).isEqualTo(BlockingCalls.THREADS);
			assertThat(((ThreadPoolExecutor) pool).getQueue()).hasSize(BlockingCalls.WAITING);
			assertThatExceptionOfType(RejectedExecutionException.class).isThrownBy(() -> pool.execute(blocking))
				.withMessageContaining("64 calls running and 4096 waiting");
			release.countDown();
			giveUp = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
			while (done.get() < BlockingCalls.THREADS + BlockingCalls.WAITING && System.nanoTime() < giveUp) {
				Thread.sleep(5);
			}
			assertThat(done.get()).isEqualTo(BlockingCalls.THREADS + BlockingCalls.WAITING);
		}
		finally {
			release.countDown();
			pool.shutdownNow();
		}
	}

}
