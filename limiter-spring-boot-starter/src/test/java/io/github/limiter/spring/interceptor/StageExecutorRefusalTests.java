package io.github.limiter.spring.interceptor;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;

import io.github.limiter.RateLimitExceededException;
import io.github.limiter.algorithm.Algorithm;
import io.github.limiter.spring.annotation.RateLimit;
import io.github.limiter.testsupport.TestRedis;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A limited method returning a {@code CompletionStage} runs on the application's task executor once Redis has
 * answered. When that executor refuses it (full, or shut down with its context), the caller's stage fails with the
 * refusal instead of never completing, and the permits it was admitted with go back. A method that returns no stage
 * at all is taken, as {@code @Async} takes it, as one that completed with nothing.
 */
class StageExecutorRefusalTests {

	private static SpringApplicationBuilder application() {
		return new SpringApplicationBuilder(Application.class).web(WebApplicationType.NONE)
			.properties("limiter.backend=redis", "spring.data.redis.host=127.0.0.1",
					"spring.data.redis.port=" + TestRedis.standalone().port(),
					"limiter.key-prefix=" + TestRedis.uniquePrefix(), "spring.main.banner-mode=off",
					"limiter.failure.deadline=5s", "limiter.failure.max-deadline=5s",
					// One thread and no queue: a second task is refused.
					"spring.task.execution.pool.core-size=1", "spring.task.execution.pool.max-size=1",
					"spring.task.execution.pool.queue-capacity=0");
	}

	@Test
	void aRefusedMethodFailsItsStageAndGivesItsPermitBack() throws Exception {
		try (ConfigurableApplicationContext context = application().run()) {
			Reports reports = context.getBean(Reports.class);
			reports.build().get(10, TimeUnit.SECONDS); // connected, and one permit of five taken
			CountDownLatch release = new CountDownLatch(1);
			occupy(context.getBean("applicationTaskExecutor", Executor.class), release);
			List<CompletableFuture<String>> calls = new ArrayList<>();
			for (int i = 0; i < 4; i++) {
				calls.add(reports.build());
			}
			int ran = 0;
			for (CompletableFuture<String> call : calls) {
				try {
					assertThat(call.get(10, TimeUnit.SECONDS)).isEqualTo("report");
					ran++;
				}
				catch (ExecutionException refused) {
					assertThat(refused.getCause()).isInstanceOf(RejectedExecutionException.class);
				}
			}
			release.countDown();
			// Only the calls that ran hold their permits: the others' came back.
			int left = 0;
			while (true) {
				try {
					whenRun(reports::build);
					left++;
				}
				catch (ExecutionException ex) {
					assertThat(ex.getCause()).isInstanceOf(RateLimitExceededException.class);
					break;
				}
			}
			assertThat(left).isEqualTo(4 - ran);
		}
	}

	@Test
	void aMethodThatReturnsNoStageCompletesWithNothing() throws Exception {
		try (ConfigurableApplicationContext context = application().run()) {
			Reports reports = context.getBean(Reports.class);
			for (int i = 0; i < 3; i++) {
				// The executor's one thread may still be leaving the previous call: a refused call is asked again.
				assertThat(whenRun(reports::nothing)).isNull();
			}
		}
	}

	/**
	 * Calls until the executor takes the method: its one thread may still be finishing the previous call, and a call
	 * it refuses gives back what it took.
	 */
	private static String whenRun(java.util.function.Supplier<CompletableFuture<String>> call) throws Exception {
		long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
		while (true) {
			try {
				return call.get().get(10, TimeUnit.SECONDS);
			}
			catch (ExecutionException ex) {
				if (!(ex.getCause() instanceof RejectedExecutionException) || System.nanoTime() > deadline) {
					throw ex;
				}
				Thread.sleep(10);
			}
		}
	}

	/** Takes the executor's only thread until released (once the first call's task has left it). */
	private static void occupy(Executor executor, CountDownLatch release) throws InterruptedException {
		long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
		while (true) {
			try {
				executor.execute(() -> {
					try {
						release.await();
					}
					catch (InterruptedException ex) {
						Thread.currentThread().interrupt();
					}
				});
				return;
			}
			catch (RejectedExecutionException stillBusy) {
				assertThat(System.nanoTime()).as("the executor's thread is free again").isLessThan(deadline);
				Thread.sleep(10);
			}
		}
	}

	@Test
	void aRefusedMethodDidNotFailAndGivesBackWhatItReservedForCountingFailures() throws Exception {
		try (ConfigurableApplicationContext context = application().run()) {
			Reports reports = context.getBean(Reports.class);
			reports.login().get(10, TimeUnit.SECONDS);
			CountDownLatch release = new CountDownLatch(1);
			occupy(context.getBean("applicationTaskExecutor", Executor.class), release);
			for (int i = 0; i < 2; i++) {
				try {
					reports.login().get(10, TimeUnit.SECONDS);
				}
				catch (ExecutionException refused) {
					assertThat(refused.getCause()).isInstanceOf(RejectedExecutionException.class);
				}
			}
			release.countDown();
			// Nothing failed: the limit of two failures an hour has all its room.
			for (int i = 0; i < 3; i++) {
				assertThat(whenRun(reports::login)).isEqualTo("welcome");
			}
		}
	}

	@Test
	void aCallStillWaitingForItsPermitWhenTheContextClosesCompletes() throws Exception {
		CompletableFuture<String> waiting;
		try (ConfigurableApplicationContext context = application().run()) {
			Reports reports = context.getBean(Reports.class);
			assertThat(reports.waitForIt().get(10, TimeUnit.SECONDS)).isEqualTo("waited");
			waiting = reports.waitForIt();
		}
		try {
			waiting.get(10, TimeUnit.SECONDS);
		}
		catch (ExecutionException failed) {
			assertThat(failed.getCause()).isNotNull();
		}
		assertThat(waiting).isDone();
	}

	@Configuration(proxyBeanMethods = false)
	@EnableAutoConfiguration
	@Import(Reports.class)
	static class Application {

	}

	static class Reports {

		// Exact and without boundaries: the permits left are counted on Redis's clock, where an epoch-aligned fixed
		// window would start afresh at an hour boundary between the test's calls.
		@RateLimit(name = "refused", max = "5", window = "1h", algorithm = Algorithm.SLIDING_WINDOW_LOG)
		public CompletableFuture<String> build() {
			return CompletableFuture.completedFuture("report");
		}

		@RateLimit(name = "logins", max = "100", window = "1h")
		@RateLimit(name = "login-failures", max = "2", window = "1h", recordOn = IllegalArgumentException.class)
		public CompletableFuture<String> login() {
			return CompletableFuture.completedFuture("welcome");
		}

		@RateLimit(name = "nothing", max = "5", window = "1h")
		public CompletableFuture<String> nothing() {
			return null;
		}

		@RateLimit(name = "waiting", max = "1", window = "2s", maxWait = "3s")
		public CompletableFuture<String> waitForIt() {
			return CompletableFuture.completedFuture("waited");
		}

	}

}
