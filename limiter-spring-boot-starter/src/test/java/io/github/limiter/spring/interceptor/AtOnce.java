package io.github.limiter.spring.interceptor;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

/** Calls made at once from several threads, released together. */
final class AtOnce {

	private AtOnce() {
	}

	/**
	 * Runs {@code call} on {@code callers} threads released at the same moment.
	 * @param callers how many threads
	 * @param call what each does
	 * @param <T> what a call answers
	 * @return the answers, in the threads' order
	 * @throws Exception when a call throws or takes more than 30 s
	 */
	static <T> List<T> run(int callers, Callable<T> call) throws Exception {
		ExecutorService pool = Executors.newFixedThreadPool(callers);
		CountDownLatch start = new CountDownLatch(1);
		try {
			List<Future<T>> calls = new ArrayList<>(callers);
			for (int i = 0; i < callers; i++) {
				calls.add(pool.submit(() -> {
					start.await();
					return call.call();
				}));
			}
			start.countDown();
			List<T> answers = new ArrayList<>(callers);
			for (Future<T> answer : calls) {
				answers.add(answer.get(30, TimeUnit.SECONDS));
			}
			return answers;
		}
		finally {
			pool.shutdown();
		}
	}

}
