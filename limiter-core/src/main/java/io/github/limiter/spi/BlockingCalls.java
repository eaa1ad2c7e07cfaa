package io.github.limiter.spi;

import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * Threads for calls that block on a Redis client (Jedis, a connection taken from a pool): bounded, so that a frozen
 * Redis under load holds a fixed number of threads instead of one per call. Up to {@value #THREADS} run at once and
 * {@value #WAITING} more wait; a call beyond is refused at once ({@link java.util.concurrent.RejectedExecutionException}),
 * which the backends turn into a {@link BackendException}, so that the failure policy answers it. Threads end after a
 * minute idle.
 */
public final class BlockingCalls {

	/** Calls that block at once: more than a client's connection pool holds, by default, is only more waiting. */
	public static final int THREADS = 64;

	/** Calls that wait for a thread, as many as wait for a connection's answer on Lettuce. */
	public static final int WAITING = 4096;

	private BlockingCalls() {
	}

	/**
	 * A bounded pool of daemon threads.
	 * @param name the threads' name
	 * @return the pool
	 */
	public static ExecutorService pool(String name) {
		ThreadPoolExecutor pool = new ThreadPoolExecutor(THREADS, THREADS, 60, TimeUnit.SECONDS,
				new LinkedBlockingQueue<>(WAITING), runnable -> {
					Thread thread = new Thread(runnable, name);
					thread.setDaemon(true);
					return thread;
				});
		pool.allowCoreThreadTimeOut(true);
		return pool;
	}

}
