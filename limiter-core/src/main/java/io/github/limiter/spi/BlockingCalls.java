package io.github.limiter.spi;

import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedTransferQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * Threads for calls that block on a Redis client (Jedis, a connection taken from a pool): bounded, so that a frozen
 * Redis under load holds a fixed number of threads instead of one per call. Up to {@value #THREADS} run at once and
 * {@value #WAITING} more wait; a call beyond is refused at once ({@link java.util.concurrent.RejectedExecutionException}),
 * which the backends turn into a {@link BackendException}, so that the failure policy answers it. A thread starts only
 * when no thread waits for a call, and ends after a minute idle.
 */
public final class BlockingCalls {

	/** Calls that block at once: more than a client's connection pool holds, by default, is only more waiting. */
	public static final int THREADS = 64;

	/** Calls that wait for a thread, as many as wait for a connection's answer on Lettuce. */
	public static final int WAITING = 4096;

	private BlockingCalls() {
	}

	/**
	 * A bounded pool of daemon threads. A call goes to a thread that waits for one when there is one, and starts a
	 * thread otherwise (a pool whose threads are all core threads starts one per call until it holds
	 * {@value #THREADS}, so that a heartbeat every second kept dozens of idle threads).
	 * @param name the threads' name
	 * @return the pool
	 */
	public static ExecutorService pool(String name) {
		HandOff queue = new HandOff();
		ThreadPoolExecutor pool = new ThreadPoolExecutor(0, THREADS, 60, TimeUnit.SECONDS, queue, runnable -> {
			Thread thread = new Thread(runnable, name);
			thread.setDaemon(true);
			return thread;
		}, (call, executor) -> {
			// Every thread became busy between the queue's refusal and the new thread's start: the call waits.
			if (executor.isShutdown() || !queue.waitFor(call)) {
				throw new RejectedExecutionException(name + ": " + THREADS + " calls running and " + WAITING
						+ " waiting");
			}
		});
		queue.pool = pool;
		return pool;
	}

	/**
	 * The pool's waiting calls. A call goes to a thread that waits for one, if any; otherwise the queue refuses it
	 * while the pool may grow, so that the pool starts a thread for it, and keeps it, up to {@value #WAITING}, once
	 * the pool has {@value #THREADS} threads. (Counting the idle threads instead misses a thread that has just started
	 * or just taken a call, and left a call waiting behind a busy thread below the bound.)
	 */
	private static final class HandOff extends LinkedTransferQueue<Runnable> {

		private static final long serialVersionUID = 1L;

		private transient ThreadPoolExecutor pool;

		@Override
		public boolean offer(Runnable call) {
			if (tryTransfer(call)) {
				return true;
			}
			if (this.pool.getPoolSize() < THREADS) {
				return false;
			}
			return waitFor(call);
		}

		boolean waitFor(Runnable call) {
			return size() < WAITING && super.offer(call);
		}

	}

}
