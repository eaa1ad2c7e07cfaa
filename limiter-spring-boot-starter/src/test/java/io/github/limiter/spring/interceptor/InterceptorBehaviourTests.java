package io.github.limiter.spring.interceptor;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicInteger;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

import io.github.limiter.Limit;
import io.github.limiter.RateLimitExceededException;
import io.github.limiter.RateLimiter;
import io.github.limiter.algorithm.Algorithm;
import io.github.limiter.spring.annotation.RateLimit;
import io.github.limiter.testsupport.LocalDecorator;
import io.github.limiter.spring.autoconfigure.RateLimiterAutoConfiguration;
import io.github.limiter.spring.autoconfigure.RateLimiterMetricsAutoConfiguration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * Waiting for a permit, counting only failures, shadow mode, and methods returning {@code CompletionStage},
 * {@code Mono} or {@code Flux}.
 */
class InterceptorBehaviourTests {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(RateLimiterAutoConfiguration.class, RateLimiterMetricsAutoConfiguration.class))
		.withBean(MeterRegistry.class, SimpleMeterRegistry::new)
		.withBean(Service.class)
		.withPropertyValues("limiter.backend=local");

	private static long millis(Runnable call) {
		long start = System.nanoTime();
		call.run();
		return (System.nanoTime() - start) / 1_000_000;
	}

	@Test
	void aConditionExcludesCallsFromTheLimitAndTheMetricsCountThemSkipped() {
		this.runner.run(context -> {
			Service service = context.getBean(Service.class);
			// One call per hour per user, except for the internal caller, whom the condition excludes.
			assertThat(service.report("alice")).isEqualTo("alice");
			assertThatExceptionOfType(RateLimitExceededException.class).isThrownBy(() -> service.report("alice"));
			for (int i = 0; i < 5; i++) {
				assertThat(service.report("internal")).isEqualTo("internal");
			}
			// Only one of two limits applies to a free user: the premium one is skipped, the free one rejects.
			assertThat(service.export("free-user", false)).isEqualTo("free-user");
			assertThatExceptionOfType(RateLimitExceededException.class).isThrownBy(() -> service.export("free-user", false))
				.satisfies(ex -> assertThat(ex.getDecision().limitName()).isEqualTo("free-exports"));
			assertThat(service.export("premium-user", true)).isEqualTo("premium-user");
			assertThat(service.export("premium-user", true)).isEqualTo("premium-user");

			MeterRegistry registry = context.getBean(MeterRegistry.class);
			assertThat(registry.get("limiter.decisions").tag("limit", "reports").tag("outcome", "skipped").counter().count())
				.isEqualTo(5);
			assertThat(registry.get("limiter.decisions").tag("limit", "reports").tag("outcome", "allowed").counter().count())
				.isEqualTo(1);
			assertThat(registry.get("limiter.decisions").tag("limit", "premium-exports").tag("outcome", "skipped")
				.counter()
				.count()).isEqualTo(2);
			assertThat(registry.get("limiter.decisions").tag("limit", "free-exports").tag("outcome", "skipped")
				.counter()
				.count()).isEqualTo(2);
		});
	}

	@Test
	void aCallWaitsForItsPermitUpToMaxWait() {
		this.runner.run(context -> {
			Service service = context.getBean(Service.class);
			service.patient();
			long waited = millis(service::patient);
			assertThat(waited).as("waited for the next token, 200 ms later").isBetween(150L, 1000L);
		});
	}

	@Test
	void aCallThatCannotGetItsPermitInTimeIsRejectedAtOnce() {
		this.runner.run(context -> {
			Service service = context.getBean(Service.class);
			service.impatient();
			long start = System.nanoTime();
			assertThatExceptionOfType(RateLimitExceededException.class).isThrownBy(service::impatient);
			assertThat((System.nanoTime() - start) / 1_000_000).as("no sleeping when the permit is too far").isLessThan(150);
		});
	}

	@Test
	void onlyFailedLoginsCountAndTheFourthAttemptIsRefusedBeforeItRuns() {
		this.runner.run(context -> {
			Service service = context.getBean(Service.class);
			assertThat(service.login("alice", "right")).isTrue();
			assertThat(service.login("alice", "right")).isTrue();
			for (int i = 0; i < 3; i++) {
				assertThatExceptionOfType(IllegalArgumentException.class).isThrownBy(() -> service.login("alice", "wrong"));
			}
			int attempts = service.attempts();
			assertThatExceptionOfType(RateLimitExceededException.class).isThrownBy(() -> service.login("alice", "right"));
			assertThat(service.attempts()).as("the refused attempt never ran").isEqualTo(attempts);
			assertThat(service.login("bob", "right")).isTrue();
		});
	}

	@Test
	void aLimitCountingFailuresCountsNothingForACallAnotherLimitRejected() {
		this.runner.run(context -> {
			Service service = context.getBean(Service.class);
			MeterRegistry registry = context.getBean(MeterRegistry.class);
			// Three per minute from one address, three failures per user: the address runs out first.
			for (int i = 0; i < 3; i++) {
				assertThatExceptionOfType(IllegalArgumentException.class)
					.isThrownBy(() -> service.guardedLogin("carol", "wrong"));
			}
			assertThatExceptionOfType(RateLimitExceededException.class)
				.isThrownBy(() -> service.guardedLogin("dave", "wrong"))
				.satisfies(ex -> assertThat(ex.getDecision().limitName()).isEqualTo("login-per-address"));
			assertThat(registry.get("limiter.decisions").tag("limit", "guarded-failures").tag("outcome", "allowed")
				.counter()
				.count()).as("only the calls that passed").isEqualTo(3);
			assertThat(registry.get("limiter.decisions").tag("limit", "login-per-address").tag("outcome", "blocked")
				.counter()
				.count()).isEqualTo(1);
			assertThat(registry.find("limiter.decisions").tag("limit", "guarded-failures").tag("outcome", "blocked")
				.counter()).isNull();
			// And dave's rejected call took nothing from his failures: his state is untouched.
			RateLimiter limiter = context.getBean(RateLimiter.class);
			Limit failures = AnnotationRateLimitOperationSource
				.byLimit(context.getBean(RateLimitOperationSource.class).rateLimitedMethods())
				.get("guarded-failures")
				.limit();
			assertThat(limiter.check(failures, "dave").remaining()).isEqualTo(2);
		});
	}

	@Test
	void aCallTheOtherLimitsRejectNeverAsksTheLimitCountingFailures() {
		// A client over its own limit, naming a victim: its calls must hold none of the victim's failure permits (the
		// review's flood past its per-IP limit put alice behind a captcha 16 times in 20), nor cost her key a call.
		java.util.List<String> asked = new java.util.concurrent.CopyOnWriteArrayList<>();
		LocalDecorator watched = new LocalDecorator() {
			@Override
			public CompletionStage<io.github.limiter.Decision> decideAsync(java.util.List<io.github.limiter.LimitRequest> requests,
					io.github.limiter.Operation operation) {
				requests.forEach(request -> asked.add(request.limit().name() + ":" + request.key()));
				return super.decideAsync(requests, operation);
			}
		};
		this.runner.withBean(RateLimiter.class, () -> RateLimiter.of(watched)).run(context -> {
			Service service = context.getBean(Service.class);
			for (int i = 0; i < 3; i++) {
				assertThatExceptionOfType(IllegalArgumentException.class)
					.isThrownBy(() -> service.guardedLogin("mallory", "wrong"));
			}
			asked.clear();
			for (int i = 0; i < 20; i++) {
				assertThatExceptionOfType(RateLimitExceededException.class)
					.isThrownBy(() -> service.guardedLogin("alice", "wrong"))
					.satisfies(ex -> assertThat(ex.getDecision().limitName()).isEqualTo("login-per-address"));
			}
			assertThat(asked).hasSize(20).allMatch(decided -> decided.startsWith("login-per-address:"));
		});
	}

	@Test
	void whenTheLimitCountingFailuresRejectsWhatTheOthersAdmittedGoesBack() {
		this.runner.run(context -> {
			Service service = context.getBean(Service.class);
			MeterRegistry registry = context.getBean(MeterRegistry.class);
			RateLimiter limiter = context.getBean(RateLimiter.class);
			java.util.Map<String, RateLimitOperation> limits = AnnotationRateLimitOperationSource
				.byLimit(context.getBean(RateLimitOperationSource.class).rateLimitedMethods());
			Limit perAddress = limits.get("login-per-address").limit();
			// Three failures per minute for erin, her address allowing three calls: the address is then used up too.
			for (int i = 0; i < 3; i++) {
				assertThatExceptionOfType(IllegalArgumentException.class)
					.isThrownBy(() -> service.guardedLogin("erin", "wrong"));
			}
			limiter.reset(perAddress, "");
			// erin's failures reject her fourth call: the address's permit it took goes back, and counts nothing.
			assertThatExceptionOfType(RateLimitExceededException.class)
				.isThrownBy(() -> service.guardedLogin("erin", "wrong"))
				.satisfies(ex -> assertThat(ex.getDecision().limitName()).isEqualTo("guarded-failures"));
			assertThat(limiter.check(perAddress, "").remaining()).as("3 left: the check's own call aside, 2").isEqualTo(2);
			assertThat(registry.get("limiter.decisions").tag("limit", "login-per-address").tag("operation", "acquire")
				.tag("outcome", "allowed")
				.counter()
				.count()).as("the three calls that ran").isEqualTo(3);
			assertThat(registry.get("limiter.decisions").tag("limit", "guarded-failures").tag("outcome", "blocked")
				.counter()
				.count()).isEqualTo(1);
		});
	}

	@Test
	void attemptsRunningAtOnceCannotAllPassBeforeAnyOfThemFailed() throws Exception {
		this.runner.run(context -> {
			Service service = context.getBean(Service.class);
			// Twelve wrong passwords at once, each taking a while to be found wrong: 3 failures a minute means 3 tries.
			java.util.Map<String, Integer> outcomes = new java.util.TreeMap<>();
			for (String outcome : AtOnce.run(12, () -> {
				try {
					service.slowLogin("carol", "wrong");
					return "ran";
				}
				catch (IllegalArgumentException ex) {
					return "failed";
				}
				catch (RateLimitExceededException ex) {
					return "refused";
				}
			})) {
				outcomes.merge(outcome, 1, Integer::sum);
			}
			assertThat(outcomes).containsExactly(java.util.Map.entry("failed", 3), java.util.Map.entry("refused", 9));
			assertThat(service.slowAttempts()).as("the refused attempts never ran").isEqualTo(3);

			// Successes hold their permit only while they run: six in a row, where three may fail.
			for (int i = 0; i < 6; i++) {
				assertThat(service.login("dave", "right")).isTrue();
			}
		});
	}

	@Test
	void aReactiveCallCancelledWhileWaitingForItsTurnTakesNothingFromItsFailureLimit() {
		this.runner.run(context -> {
			Service service = context.getBean(Service.class);
			assertThat(service.reactiveLogin("erin").block()).isEqualTo("ok");
			// The second call waits for the rate before its failure limit is asked: the subscriber gives up meanwhile.
			StepVerifier.create(service.reactiveLogin("erin").timeout(java.time.Duration.ofMillis(100)))
				.expectError(java.util.concurrent.TimeoutException.class)
				.verify();
			assertThat(service.reactiveRuns()).as("the cancelled call never ran").isEqualTo(1);
			// Nothing failed: the one failure a minute is still there once the rate allows another call.
			assertThat(service.reactiveLogin("erin").block(java.time.Duration.ofSeconds(10))).isEqualTo("ok");
		});
	}

	@Test
	void aReactiveCallCancelledWhileItsOtherLimitsDecideAsksNothingMoreAndTakesNothing() {
		// Every decision answers 300 ms late; the subscriber gives up after 100 ms, while the enforced limit decides.
		assertCancelledCallTakesNothing(name -> true);
	}

	@Test
	void aReactiveCallCancelledWhileItsFailureLimitDecidesGivesItsReservationBack() {
		// Only the failure limit answers late: the subscriber gives up while its reservation is on its way.
		assertCancelledCallTakesNothing(name -> name.equals("mono-failures"));
	}

	@Test
	void aReactiveCallCancelledWhileItsShadowLimitDecidesGivesEveryPermitBack() {
		// Only the shadow limit answers late: the subscriber gives up while it decides, the last step before the call.
		assertCancelledCallTakesNothing(name -> name.equals("mono-shadow"));
	}

	private void assertCancelledCallTakesNothing(java.util.function.Predicate<String> late) {
		java.util.List<String> asked = new java.util.concurrent.CopyOnWriteArrayList<>();
		java.util.concurrent.atomic.AtomicBoolean cancelled = new java.util.concurrent.atomic.AtomicBoolean();
		LocalDecorator slow = new LocalDecorator() {
			@Override
			public CompletionStage<io.github.limiter.Decision> decideAsync(java.util.List<io.github.limiter.LimitRequest> requests,
					io.github.limiter.Operation operation) {
				String name = requests.get(0).limit().name();
				if (cancelled.get()) {
					asked.add(name);
				}
				CompletionStage<io.github.limiter.Decision> decided = super.decideAsync(requests, operation);
				return late.test(name) ? decided.toCompletableFuture()
					.thenApplyAsync(decision -> decision,
							CompletableFuture.delayedExecutor(300, java.util.concurrent.TimeUnit.MILLISECONDS))
						: decided;
			}
		};
		this.runner.withBean(io.github.limiter.spi.RateLimiterBackend.class, () -> slow)
			.withPropertyValues("limiter.failure.deadline=1s", "limiter.failure.max-deadline=2s")
			.run(context -> {
				Service service = context.getBean(Service.class);
				StepVerifier.create(service.guardedMono("gina").timeout(java.time.Duration.ofMillis(100))
					.doOnError(ex -> cancelled.set(true)))
					.expectError(java.util.concurrent.TimeoutException.class)
					.verify();
				Thread.sleep(1_000);
				assertThat(service.reactiveRuns()).as("the cancelled call never ran").isZero();
				assertThat(asked).as("asked after the cancel").doesNotContain("mono-shadow");
				if (late.test("mono-rate")) {
					assertThat(asked).doesNotContain("mono-failures");
				}
				java.util.Map<String, RateLimitOperation> limits = AnnotationRateLimitOperationSource
					.byLimit(context.getBean(RateLimitOperationSource.class).rateLimitedMethods());
				RateLimiter limiter = context.getBean(RateLimiter.class);
				// A check answers what would remain after one more call: a key untouched by the call shows capacity - 1.
				assertThat(limiter.check(limits.get("mono-rate").limit(), "").remaining()).isEqualTo(4);
				assertThat(limiter.check(limits.get("mono-failures").limit(), "gina").remaining()).isEqualTo(2);
				assertThat(limiter.check(limits.get("mono-shadow").limit(), "").remaining()).isEqualTo(4);
				MeterRegistry registry = context.getBean(MeterRegistry.class);
				for (String limit : java.util.List.of("mono-rate", "mono-failures", "mono-shadow")) {
					assertThat(registry.find("limiter.decisions").tag("limit", limit).tag("operation", "acquire")
						.tag("outcome", "allowed")
						.counter())
						.as(limit + " counts nothing for a call that never ran").isNull();
				}
			});
	}

	@Test
	void aReactiveCallCancelledWhileItsMethodRunsKeepsItsFailureReservation() {
		this.runner.run(context -> {
			Service service = context.getBean(Service.class);
			// The attempt runs for 2 s; its caller goes away after 100 ms, before the answer, as a guesser that drops
			// every attempt would: the attempt counts as failed, and the next one is refused.
			StepVerifier.create(service.slowReactiveLogin("frank").timeout(java.time.Duration.ofMillis(100)))
				.expectError(java.util.concurrent.TimeoutException.class)
				.verify();
			StepVerifier.create(service.slowReactiveLogin("frank"))
				.expectError(RateLimitExceededException.class)
				.verify(java.time.Duration.ofSeconds(10));
		});
	}

	@Test
	void aReactiveCallCancelledWhileWaitingForAPermitTakesNone() throws InterruptedException {
		this.runner.run(context -> {
			Service service = context.getBean(Service.class);
			long start = System.nanoTime();
			assertThat(service.waiting().block()).isEqualTo("ok");
			// The next permit comes 2 s after the first: this subscriber gives up long before.
			StepVerifier.create(service.waiting().timeout(java.time.Duration.ofMillis(100)))
				.expectError(java.util.concurrent.TimeoutException.class)
				.verify();
			Thread.sleep(Math.max(0, 2_500 - (System.nanoTime() - start) / 1_000_000));
			assertThat(service.waitingRuns()).as("the cancelled call never ran").isEqualTo(1);
			// The permit of the second window is still there for whoever comes now (before: the abandoned wait took it).
			assertThat(service.notWaiting().block()).isEqualTo("ok");
		});
	}

	@Test
	void reactiveCallsCancelledWhileQueuedGiveTheirPlacesBack() {
		this.runner.run(context -> {
			Service service = context.getBean(Service.class);
			assertThat(service.queued().block()).isEqualTo("ok");
			// Four calls queue behind it, 1, 2, 3 and 4 s out, and their subscribers give up at once.
			for (int i = 0; i < 4; i++) {
				StepVerifier.create(service.queued().timeout(java.time.Duration.ofMillis(100)))
					.expectError(java.util.concurrent.TimeoutException.class)
					.verify();
			}
			long waited = millis(() -> assertThat(service.queued().block()).isEqualTo("ok"));
			assertThat(service.queuedRuns()).as("the cancelled calls never ran").isEqualTo(2);
			assertThat(waited).as("queued behind the first call only, not behind the 4 that left (about 5 s)")
				.isLessThan(3_000);
		});
	}

	@Test
	void aConditionOnTheResultCanDecideWhatCounts() {
		this.runner.run(context -> {
			Service service = context.getBean(Service.class);
			assertThat(service.check("x", true)).isTrue();
			assertThat(service.check("x", false)).isFalse();
			assertThat(service.check("x", true)).isTrue();
			assertThat(service.check("x", false)).isFalse();
			assertThatExceptionOfType(RateLimitExceededException.class).isThrownBy(() -> service.check("x", true));
		});
	}

	@Test
	void shadowModeLetsEveryCallThroughAndCountsTheWouldBeRejections() {
		this.runner.run(context -> {
			Service service = context.getBean(Service.class);
			for (int i = 0; i < 3; i++) {
				service.dark();
			}
			MeterRegistry registry = context.getBean(MeterRegistry.class);
			assertThat(registry.get("limiter.decisions").tag("limit", "dark").tag("operation", "shadow")
				.tag("outcome", "blocked").counter().count()).isEqualTo(2);
			assertThat(registry.get("limiter.decisions").tag("limit", "dark").tag("operation", "shadow")
				.tag("outcome", "allowed").counter().count()).isEqualTo(1);
		});
	}

	@Test
	void shadowModeCanBeSwitchedOnForEveryLimit() {
		this.runner.withPropertyValues("limiter.shadow=true").run(context -> {
			Service service = context.getBean(Service.class);
			for (int i = 0; i < 5; i++) {
				service.impatient();
			}
		});
	}

	@Test
	void aCompletionStageIsLimitedWithoutBlocking() {
		this.runner.run(context -> {
			Service service = context.getBean(Service.class);
			assertThat(service.async().toCompletableFuture().join()).isEqualTo("done");
			assertThatExceptionOfType(CompletionException.class)
				.isThrownBy(() -> service.async().toCompletableFuture().join())
				.withCauseInstanceOf(RateLimitExceededException.class);
		});
	}

	@Test
	void aKeyTooLongFailsTheStageAsARejectionDoes() {
		this.runner.run(context -> {
			Service service = context.getBean(Service.class);
			CompletionStage<String> stage = service.keyedStage("x".repeat(5000));
			assertThatExceptionOfType(CompletionException.class).isThrownBy(() -> stage.toCompletableFuture().join())
				.withCauseInstanceOf(RateLimitKeyException.class);
			assertThat(context.getBean(MeterRegistry.class).get("limiter.decisions").tag("limit", "stage-by-user")
				.tag("outcome", "invalid-key")
				.counter()
				.count()).isEqualTo(1);
		});
	}

	@Test
	void aMonoIsLimitedWhenSubscribedAndItsWorkNeverStartsWhenRejected() {
		this.runner.run(context -> {
			Service service = context.getBean(Service.class);
			Mono<String> first = service.mono();
			Mono<String> second = service.mono();
			assertThat(service.monoRuns()).as("nothing ran before subscription").isZero();
			StepVerifier.create(first).expectNext("mono").verifyComplete();
			StepVerifier.create(second).expectError(RateLimitExceededException.class).verify();
			assertThat(service.monoRuns()).isEqualTo(1);
		});
	}

	@Test
	void aFluxIsLimitedWhenSubscribed() {
		this.runner.run(context -> {
			Service service = context.getBean(Service.class);
			StepVerifier.create(service.flux()).expectNext(1, 2, 3).verifyComplete();
			StepVerifier.create(service.flux()).expectError(RateLimitExceededException.class).verify();
		});
	}

	@Test
	void aReactiveFallbackAnswersInstead() {
		this.runner.run(context -> {
			Service service = context.getBean(Service.class);
			StepVerifier.create(service.monoWithFallback()).expectNext("fresh").verifyComplete();
			StepVerifier.create(service.monoWithFallback()).expectNext("cached").verifyComplete();
		});
	}

	@Test
	void aReactiveCallWaitsWithoutBlocking() {
		this.runner.run(context -> {
			Service service = context.getBean(Service.class);
			StepVerifier.create(service.patientMono()).expectNext("ok").verifyComplete();
			StepVerifier.create(service.patientMono()).expectNext("ok").verifyComplete();
		});
	}

	/** ... and is logged once per method with its reason, not on every call (a log storm at a hundred calls a second). */
	@Test
	void aBrokenRecordConditionNeverReplacesTheCallsOutcome() {
		this.runner.withBean(Broken.class).run(context -> {
			Broken broken = context.getBean(Broken.class);
			try (io.github.limiter.testsupport.LoggedWarnings warnings = io.github.limiter.testsupport.LoggedWarnings
				.of(RateLimitInterceptor.class)) {
				for (int i = 0; i < 5; i++) {
					assertThat(broken.call()).isNull();
				}
				assertThat(broken.stage().toCompletableFuture().get(2, java.util.concurrent.TimeUnit.SECONDS)).isNull();
				assertThat(warnings.messages()).hasSize(2)
					.allSatisfy(message -> assertThat(message).contains("counts as failed", "EL1011E"));
			}
		});
	}

	@Test
	void anAsynchronousMethodNeverRunsOnTheThreadThatDecided() {
		this.runner.withBean(SlowDecisions.class).run(context -> {
			Service service = context.getBean(Service.class);
			String thread = service.threadName().toCompletableFuture().get(2, java.util.concurrent.TimeUnit.SECONDS);
			assertThat(thread).doesNotStartWith("limiter-deadline");
		});
	}

	static class Broken {

		@RateLimit(max = "5", window = "1m", recordIf = "#result.isEmpty()")
		public String call() {
			return null;
		}

		@RateLimit(max = "5", window = "1m", recordIf = "#result.isEmpty()")
		public CompletionStage<String> stage() {
			return CompletableFuture.completedFuture(null);
		}

	}

	/** Not a bean that matters: makes the context start the limiter's executors. */
	static class SlowDecisions {

	}

	static class Service {

		@RateLimit(name = "reports", key = "#user", max = "1", window = "1h", condition = "#user != 'internal'")
		public String report(String user) {
			return user;
		}

		@RateLimit(name = "free-exports", key = "#user", max = "1", window = "1h", condition = "!#premium")
		@RateLimit(name = "premium-exports", key = "#user", max = "100", window = "1h", condition = "#premium")
		public String export(String user, boolean premium) {
			return user;
		}

		@RateLimit(max = "100", window = "1m")
		public CompletionStage<String> threadName() {
			return CompletableFuture.completedFuture(Thread.currentThread().getName());
		}


		final AtomicInteger attempts = new AtomicInteger();

		final AtomicInteger slowAttempts = new AtomicInteger();

		final AtomicInteger reactiveRuns = new AtomicInteger();

		final AtomicInteger monoRuns = new AtomicInteger();

		public int attempts() {
			return this.attempts.get();
		}

		public int monoRuns() {
			return this.monoRuns.get();
		}

		@RateLimit(max = "1", window = "200ms", maxWait = "1s")
		public void patient() {
		}

		@RateLimit(max = "1", window = "1m", maxWait = "50ms")
		public void impatient() {
		}

		@RateLimit(key = "#user", max = "3", window = "1m", algorithm = Algorithm.SLIDING_WINDOW_LOG,
				recordOn = IllegalArgumentException.class)
		public boolean login(String user, String password) {
			this.attempts.incrementAndGet();
			if (!password.equals("right")) {
				throw new IllegalArgumentException("bad credentials");
			}
			return true;
		}

		@RateLimit(name = "guarded-failures", key = "#user", max = "3", window = "1m",
				recordOn = IllegalArgumentException.class)
		@RateLimit(name = "login-per-address", max = "3", window = "1m")
		public void guardedLogin(String user, String password) {
			throw new IllegalArgumentException("bad credentials for " + user);
		}

		@RateLimit(name = "slow-login", key = "#user", max = "3", window = "1m",
				algorithm = Algorithm.SLIDING_WINDOW_LOG, recordOn = IllegalArgumentException.class)
		public void slowLogin(String user, String password) throws InterruptedException {
			this.slowAttempts.incrementAndGet();
			Thread.sleep(300);
			throw new IllegalArgumentException("bad credentials for " + user);
		}

		int slowAttempts() {
			return this.slowAttempts.get();
		}

		@RateLimit(name = "slow-reactive-failures", key = "#user", max = "1", window = "1m",
				recordOn = IllegalArgumentException.class)
		public Mono<String> slowReactiveLogin(String user) {
			return Mono.delay(java.time.Duration.ofSeconds(2)).then(Mono.error(new IllegalArgumentException("bad")));
		}

		@RateLimit(name = "mono-failures", key = "#user", max = "3", window = "1m",
				recordOn = IllegalArgumentException.class)
		@RateLimit(name = "mono-rate", max = "5", window = "1m")
		@RateLimit(name = "mono-shadow", max = "5", window = "1m", shadow = "true")
		public Mono<String> guardedMono(String user) {
			return Mono.fromCallable(() -> {
				this.reactiveRuns.incrementAndGet();
				return "ok";
			});
		}

		@RateLimit(name = "reactive-failures", key = "#user", max = "1", window = "1m",
				recordOn = IllegalArgumentException.class)
		@RateLimit(name = "reactive-rate", max = "1", window = "500ms", maxWait = "2s")
		public Mono<String> reactiveLogin(String user) {
			return Mono.fromCallable(() -> {
				this.reactiveRuns.incrementAndGet();
				return "ok";
			});
		}

		int reactiveRuns() {
			return this.reactiveRuns.get();
		}

		@RateLimit(key = "#key", max = "2", window = "1m", recordIf = "#result == false")
		public boolean check(String key, boolean ok) {
			return ok;
		}

		@RateLimit(name = "dark", max = "1", window = "1h", shadow = "true")
		public void dark() {
		}

		@RateLimit(name = "stage-by-user", key = "#user", max = "5", window = "1m")
		public CompletionStage<String> keyedStage(String user) {
			return CompletableFuture.completedFuture(user);
		}

		@RateLimit(max = "1", window = "1h")
		public CompletionStage<String> async() {
			return CompletableFuture.supplyAsync(() -> "done");
		}

		@RateLimit(max = "1", window = "1h")
		public Mono<String> mono() {
			return Mono.fromCallable(() -> {
				this.monoRuns.incrementAndGet();
				return "mono";
			});
		}

		@RateLimit(max = "1", window = "1h")
		public Flux<Integer> flux() {
			return Flux.just(1, 2, 3);
		}

		@RateLimit(max = "1", window = "1h", fallback = "cached")
		public Mono<String> monoWithFallback() {
			return Mono.just("fresh");
		}

		public Mono<String> cached() {
			return Mono.just("cached");
		}

		final AtomicInteger waitingRuns = new AtomicInteger();

		final AtomicInteger queuedRuns = new AtomicInteger();

		@RateLimit(name = "waiting", max = "1", window = "2s", maxWait = "5s")
		public Mono<String> waiting() {
			return Mono.fromCallable(() -> {
				this.waitingRuns.incrementAndGet();
				return "ok";
			});
		}

		@RateLimit(name = "waiting", max = "1", window = "2s")
		public Mono<String> notWaiting() {
			return Mono.just("ok");
		}

		int waitingRuns() {
			return this.waitingRuns.get();
		}

		@RateLimit(name = "queue", max = "1", window = "1s", algorithm = Algorithm.LEAKY_BUCKET, burst = "5")
		public Mono<String> queued() {
			return Mono.fromCallable(() -> {
				this.queuedRuns.incrementAndGet();
				return "ok";
			});
		}

		int queuedRuns() {
			return this.queuedRuns.get();
		}

		@RateLimit(max = "1", window = "200ms", maxWait = "1s")
		public Mono<String> patientMono() {
			return Mono.just("ok");
		}

	}

}
