package io.github.limiter.guard;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.redisson.Redisson;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.jedis.JedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import io.github.limiter.Decision;
import io.github.limiter.Limit;
import io.github.limiter.LimitRequest;
import io.github.limiter.Operation;
import io.github.limiter.algorithm.FixedWindow;
import io.github.limiter.algorithm.SlidingWindowLog;
import io.github.limiter.algorithm.TokenBucket;
import io.github.limiter.backend.redis.spring.SpringDataRedisScriptExecutor;
import io.github.limiter.backend.redisson.RedissonBackend;
import io.github.limiter.spi.RateLimiterBackend;
import io.github.limiter.testsupport.RedisProcess;
import io.github.limiter.testsupport.StubBackend;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * With Redis frozen ({@code kill -STOP}), every decision returns within the deadline plus a margin under each failure
 * policy; a failed probe opens the circuit so that calls stop paying the deadline, and a probe that answers closes
 * it. A backend that answers late is not taken for a dead one, and the instances sharing a Redis count each other.
 */
class GuardedBackendIntegrationTests {

	private static final Duration DEADLINE = Duration.ofMillis(50);

	private static final Duration MAX_DEADLINE = Duration.ofMillis(300);

	/** Generous for a shared two-core machine; the clients' own timeouts are seconds. */
	private static final long MARGIN_MILLIS = 400;

	private final Limit limit = TokenBucket.of("guarded", 100, Duration.ofMinutes(1));

	private RedisProcess redis;

	private LettuceConnectionFactory lettuce;

	@BeforeEach
	void start() {
		this.redis = RedisProcess.start();
		this.lettuce = new LettuceConnectionFactory(new RedisStandaloneConfiguration("127.0.0.1", this.redis.port()));
		this.lettuce.afterPropertiesSet();
		this.lettuce.start();
	}

	@AfterEach
	void stop() {
		this.redis.resume();
		this.lettuce.destroy();
		this.redis.close();
	}

	/**
	 * A guard that has seen its backend answer: until then a probe waits 5 s (the first contact connects), and a
	 * loaded machine may need a few tries.
	 */
	private GuardedBackend guard(RateLimiterBackend backend, FailurePolicy policy) throws InterruptedException {
		warmUp(backend);
		GuardedBackend guarded = GuardedBackend.builder(backend)
			.deadline(DEADLINE)
			.maxDeadline(MAX_DEADLINE)
			.openDuration(Duration.ofMillis(300))
			.failurePolicy(requests -> policy)
			.expectedInstances(4)
			.build();
		long giveUp = System.nanoTime() + Duration.ofSeconds(10).toNanos();
		while (guarded.decide(List.of(LimitRequest.of(this.limit, "warm-up")), Operation.CHECK)
			.origin() != Decision.Origin.BACKEND && System.nanoTime() < giveUp) {
			Thread.sleep(100);
		}
		return guarded;
	}

	private RateLimiterBackend lettuceBackend() {
		return SpringDataRedisScriptExecutor.backend(this.lettuce, Runnable::run).keyPrefix("g:").build();
	}

	/** Connects and loads the script with no deadline, so that a loaded machine cannot fail the first guarded call. */
	private void warmUp(RateLimiterBackend backend) {
		backend.decide(List.of(LimitRequest.of(this.limit, "warm-up")), Operation.CHECK);
	}

	/** After Redis resumes, the next probe closes the circuit; on a loaded machine a probe may miss the deadline. */
	/**
	 * Decides until the backend has answered twice in a row: a guard's first answer is cold and not learnt from, and
	 * its deadline holds once a warm one has been.
	 */
	private Timed decideUntilBackend(GuardedBackend guarded) throws InterruptedException {
		long giveUp = System.nanoTime() + Duration.ofSeconds(10).toNanos();
		Timed timed = decide(guarded, this.limit);
		int inARow = (timed.decision().origin() == Decision.Origin.BACKEND) ? 1 : 0;
		while (inARow < 2 && System.nanoTime() < giveUp) {
			if (inARow == 0) {
				Thread.sleep(100);
			}
			timed = decide(guarded, this.limit);
			inARow = (timed.decision().origin() == Decision.Origin.BACKEND) ? inARow + 1 : 0;
		}
		return timed;
	}

	private static void awaitState(GuardedBackend guarded, CircuitBreaker.State state) throws InterruptedException {
		long giveUp = System.nanoTime() + Duration.ofSeconds(10).toNanos();
		while (guarded.breaker().state() != state && System.nanoTime() < giveUp) {
			Thread.sleep(10);
		}
		assertThat(guarded.breaker().state()).isEqualTo(state);
	}

	private static Timed decide(RateLimiterBackend backend, Limit limit) {
		long start = System.nanoTime();
		Decision decision = backend.decide(List.of(LimitRequest.of(limit, "k")), Operation.ACQUIRE);
		return new Timed(decision, (System.nanoTime() - start) / 1_000_000);
	}

	/** Redis's answers as this JVM would read them: each decision's answer passed through {@code reading}. */
	private static RateLimiterBackend readingAnswers(RateLimiterBackend redis,
			java.util.function.BiFunction<List<LimitRequest>, CompletionStage<Decision>, CompletionStage<Decision>> reading) {
		return answering(redis, (requests, ask) -> reading.apply(requests, ask.get()));
	}

	/** Redis behind {@code answer}, which asks it (or not) for each decision. */
	private static RateLimiterBackend answering(RateLimiterBackend redis, java.util.function.BiFunction<List<LimitRequest>,
			java.util.function.Supplier<CompletionStage<Decision>>, CompletionStage<Decision>> answer) {
		return new RateLimiterBackend() {

			@Override
			public CompletionStage<Decision> decideAsync(List<LimitRequest> requests, Operation operation) {
				return answer.apply(requests, () -> redis.decideAsync(requests, operation));
			}

			@Override
			public CompletionStage<Void> resetAsync(Limit limit, String key) {
				return redis.resetAsync(limit, key);
			}

			@Override
			public CompletionStage<Void> refundAsync(List<LimitRequest> requests, Decision acquired) {
				return redis.refundAsync(requests, acquired);
			}

		};
	}

	record Timed(Decision decision, long millis) {

	}

	@Test
	void eachPolicyDecidesWithinTheDeadlineWhileRedisIsFrozen() throws InterruptedException {
		GuardedBackend open = guard(lettuceBackend(), FailurePolicy.OPEN);
		GuardedBackend closed = guard(lettuceBackend(), FailurePolicy.CLOSED);
		GuardedBackend local = guard(lettuceBackend(), FailurePolicy.LOCAL);
		assertThat(decideUntilBackend(open).decision().origin()).isEqualTo(Decision.Origin.BACKEND);

		this.redis.freeze();
		Timed admitted = decide(open, this.limit);
		assertThat(admitted.millis()).isLessThan(MAX_DEADLINE.toMillis() + MARGIN_MILLIS);
		assertThat(admitted.decision().allowed()).isTrue();
		assertThat(admitted.decision().origin()).isEqualTo(Decision.Origin.FAIL_OPEN);

		Timed rejected = decide(closed, this.limit);
		assertThat(rejected.millis()).isLessThan(MAX_DEADLINE.toMillis() + MARGIN_MILLIS);
		assertThat(rejected.decision().allowed()).isFalse();
		assertThat(rejected.decision().origin()).isEqualTo(Decision.Origin.FAIL_CLOSED);
		assertThat(rejected.decision().retryAfter()).isPositive();

		Timed unconfirmed = decide(local, this.limit);
		assertThat(unconfirmed.millis()).isLessThan(MAX_DEADLINE.toMillis() + MARGIN_MILLIS);
		assertThat(unconfirmed.decision().allowed()).as("not known to be down: Redis may still decide it").isFalse();
		assertThat(unconfirmed.decision().origin()).isEqualTo(Decision.Origin.UNDECIDED);
		assertThat(local.stats().lastFailure().message()).startsWith("no answer within ");

		awaitState(local, CircuitBreaker.State.OPEN);
		assertThat(local.stats().lastFailure().message()).isEqualTo("probe: no answer within 300 ms");
		Timed fallback = decide(local, this.limit);
		assertThat(fallback.decision().origin()).isEqualTo(Decision.Origin.LOCAL_FALLBACK);
		assertThat(fallback.decision().allowed()).isTrue();
		assertThat(fallback.decision().limit()).as("a quarter of the limit for 4 instances").isEqualTo(25);
		assertThat(local.stats().degradedDecisions()).isEqualTo(2);
		System.out.println("Frozen Redis, deadline 50 ms, Lettuce: open " + admitted.millis() + " ms, closed "
				+ rejected.millis() + " ms, local " + unconfirmed.millis() + " ms (unconfirmed), then "
				+ fallback.millis() + " ms once the probe opened the circuit");
		List.of(open, closed, local).forEach(GuardedBackend::close);
	}

	@Test
	void theCircuitOpensStopsPayingTheDeadlineAndClosesWhenAProbeAnswers() throws Exception {
		GuardedBackend guarded = guard(lettuceBackend(), FailurePolicy.LOCAL);
		this.redis.freeze();
		decide(guarded, this.limit);
		awaitState(guarded, CircuitBreaker.State.OPEN);
		long slowest = 0;
		for (int i = 0; i < 50; i++) {
			Timed fast = decide(guarded, this.limit);
			slowest = Math.max(slowest, fast.millis());
			assertThat(fast.millis()).as("an open circuit answers at once").isLessThan(MARGIN_MILLIS);
			assertThat(fast.decision().origin()).isEqualTo(Decision.Origin.LOCAL_FALLBACK);
		}
		System.out.println("Circuit open: slowest of 50 decisions " + slowest + " ms");
		this.redis.resume();
		Timed probe = decideUntilBackend(guarded);
		assertThat(probe.decision().origin()).isEqualTo(Decision.Origin.BACKEND);
		assertThat(guarded.breaker().state()).isEqualTo(CircuitBreaker.State.CLOSED);
		assertThat(decide(guarded, this.limit).decision().origin()).isEqualTo(Decision.Origin.BACKEND);
		guarded.close();
	}

	/**
	 * Four instances cannot share 3 permits a day: shares of one permit each would admit 4 a day among them. Such a
	 * window has no local share and rejects until Redis is back. A bucket's rate divides at any count, so a bucket of
	 * 1 still paces locally. A rejection retries at the next probe, which may find Redis back with room that the local
	 * share has not: not in a week because a weekly share is spent.
	 */
	@Test
	void outageSharesHoldTheLimitAndTheirRejectionsRetryAtTheNextProbe() throws Exception {
		GuardedBackend guarded = guard(lettuceBackend(), FailurePolicy.LOCAL);
		Limit daily = FixedWindow.of("daily", 3, Duration.ofDays(1));
		Limit pacing = TokenBucket.of("pacing", 1, Duration.ofSeconds(1));
		this.redis.freeze();
		decide(guarded, this.limit);
		awaitState(guarded, CircuitBreaker.State.OPEN);

		Decision none = decide(guarded, daily).decision();
		assertThat(none.allowed()).isFalse();
		assertThat(none.origin()).isEqualTo(Decision.Origin.LOCAL_FALLBACK);
		assertThat(none.retryAfter()).as("until the next probe, not the end of the day")
			.isPositive()
			.isLessThanOrEqualTo(Duration.ofMillis(300));
		assertThat(none.resetAfter()).as("a rejection nobody counted tells only when to retry")
			.isEqualTo(none.retryAfter());

		// Without boundaries: the local share decides on the real clock, where an epoch-aligned fixed window of a week
		// would start afresh between the calls at its boundary.
		Limit weekly = SlidingWindowLog.of("weekly", 8, Duration.ofDays(7));
		assertThat(decide(guarded, weekly).decision().allowed()).isTrue();
		assertThat(decide(guarded, weekly).decision().allowed()).isTrue();
		Decision shareSpent = decide(guarded, weekly).decision();
		assertThat(shareSpent.allowed()).as("a share of 2").isFalse();
		assertThat(shareSpent.retryAfter()).as("Redis, back at the next probe, may have room: not in a week")
			.isLessThanOrEqualTo(Duration.ofMillis(300));

		Decision paced = decide(guarded, pacing).decision();
		assertThat(paced.allowed()).isTrue();
		assertThat(paced.origin()).isEqualTo(Decision.Origin.LOCAL_FALLBACK);
		Decision next = decide(guarded, pacing).decision();
		assertThat(next.allowed()).isFalse();
		assertThat(next.retryAfter()).isPositive().isLessThanOrEqualTo(Duration.ofMillis(300));

		long giveUp = System.nanoTime() + Duration.ofSeconds(10).toNanos();
		while (!guarded.breaker().remainingOpen().isZero() && System.nanoTime() < giveUp) {
			Thread.sleep(10);
		}
		Decision whileProbing = decide(guarded, daily).decision();
		assertThat(guarded.breaker().state()).as("this call sent a probe to the frozen Redis")
			.isEqualTo(CircuitBreaker.State.HALF_OPEN);
		assertThat(whileProbing.retryAfter()).as("once the probe has had its time, not the deadline's floor")
			.isEqualTo(MAX_DEADLINE);
		guarded.close();
	}

	@Test
	void aRefundGoesWhereItsDecisionWasMade() throws Exception {
		GuardedBackend guarded = guard(lettuceBackend(), FailurePolicy.LOCAL);
		List<LimitRequest> request = List.of(LimitRequest.of(this.limit, "refunded"));
		Decision byRedis = guarded.decide(request, Operation.ACQUIRE);
		assertThat(byRedis.origin()).isEqualTo(Decision.Origin.BACKEND);
		this.redis.freeze();
		decide(guarded, this.limit);
		awaitState(guarded, CircuitBreaker.State.OPEN);
		Decision last = null;
		for (Decision local = guarded.decide(request, Operation.ACQUIRE); local.allowed(); local = guarded.decide(request,
				Operation.ACQUIRE)) {
			assertThat(local.origin()).isEqualTo(Decision.Origin.LOCAL_FALLBACK);
			last = local;
		}
		assertThat(last).as("the local share admits at first").isNotNull();
		guarded.refundAsync(request, last).toCompletableFuture().join();
		assertThat(guarded.decide(request, Operation.ACQUIRE).allowed()).as("given back to the local share").isTrue();
		assertThat(guarded.decide(request, Operation.ACQUIRE).allowed()).isFalse();
		assertThatExceptionOfType(java.util.concurrent.CompletionException.class)
			.isThrownBy(() -> guarded.refundAsync(request, byRedis).toCompletableFuture().join())
			.withCauseInstanceOf(io.github.limiter.spi.BackendException.class)
			.withMessageContaining("the backend is down");
		guarded.close();
	}

	@Test
	void answersThatNeverLeftTheJvmDoNotKeepTheCircuitClosedWhileRedisIsDown() throws Exception {
		RateLimiterBackend redis = lettuceBackend();
		Decision remembered = redis.decide(List.of(LimitRequest.of(this.limit, "remembered")), Operation.CHECK)
			.withOrigin(Decision.Origin.REMEMBERED);
		// As the denial cache answers a rejection it remembers: at once, without asking Redis (its own test shows
		// that its answers say so).
		RateLimiterBackend remembering = answering(redis, (requests, ask) -> requests.get(0).key().equals("remembered")
				? CompletableFuture.completedFuture(remembered) : ask.get());
		GuardedBackend guarded = guard(remembering, FailurePolicy.LOCAL);
		this.redis.freeze();
		decide(guarded, this.limit);
		long giveUp = System.nanoTime() + Duration.ofSeconds(10).toNanos();
		while (guarded.breaker().state() != CircuitBreaker.State.OPEN && System.nanoTime() < giveUp) {
			guarded.decide(List.of(LimitRequest.of(this.limit, "remembered")), Operation.CHECK);
			Thread.sleep(1);
		}
		assertThat(guarded.breaker().state()).as("the probes' silence is an outage, whatever was remembered locally")
			.isEqualTo(CircuitBreaker.State.OPEN);
		guarded.close();
	}

	@org.junit.jupiter.params.ParameterizedTest(name = "{0}")
	@org.junit.jupiter.params.provider.ValueSource(strings = { "DEBUG SLEEP", "CLIENT PAUSE WRITE" })
	void aSlowOrPausedRedisCostsNoMoreThanTheMaxDeadline(String stall) throws Exception {
		GuardedBackend guarded = guard(lettuceBackend(), FailurePolicy.LOCAL);
		assertThat(decideUntilBackend(guarded).decision().origin()).isEqualTo(Decision.Origin.BACKEND);
		Thread staller = new Thread(() -> {
			if (stall.equals("DEBUG SLEEP")) {
				this.redis.command("DEBUG", "SLEEP", "1.5");
			}
			else {
				this.redis.command("CLIENT", "PAUSE", "1500", "WRITE");
			}
		});
		staller.start();
		Thread.sleep(100);
		long slowest = 0;
		for (int i = 0; i < 20; i++) {
			Timed timed = decide(guarded, this.limit);
			slowest = Math.max(slowest, timed.millis());
			assertThat(timed.millis()).isLessThan(MAX_DEADLINE.toMillis() + MARGIN_MILLIS);
			assertThat(timed.decision().origin()).isIn(Decision.Origin.UNDECIDED, Decision.Origin.LOCAL_FALLBACK);
		}
		staller.join();
		assertThat(decideUntilBackend(guarded).decision().origin()).isEqualTo(Decision.Origin.BACKEND);
		System.out.println(stall + " for 1.5 s: slowest of 20 decisions " + slowest + " ms, then Redis decides again");
		guarded.close();
	}

	@Test
	void aBusyJvmIsNotAnOutageTheDeadlineFollowsTheAnswersAndNothingIsAdmittedLocally() throws Exception {
		// Once the guard knows the backend, every answer of a healthy Redis reaches the caller 150 ms late, as on a JVM
		// too busy to read it sooner.
		RateLimiterBackend redis = lettuceBackend();
		warmUp(redis);
		Executor late = CompletableFuture.delayedExecutor(150, TimeUnit.MILLISECONDS);
		java.util.concurrent.atomic.AtomicBoolean busyNow = new java.util.concurrent.atomic.AtomicBoolean();
		RateLimiterBackend busy = readingAnswers(redis, (requests, answer) -> busyNow.get()
				? answer.thenApplyAsync(decision -> decision, late) : answer);
		GuardedBackend guarded = GuardedBackend.builder(busy)
			.deadline(DEADLINE)
			.maxDeadline(Duration.ofSeconds(2))
			.failurePolicy(requests -> FailurePolicy.LOCAL)
			.build();
		assertThat(decideUntilBackend(guarded).decision().origin()).isEqualTo(Decision.Origin.BACKEND);
		long degradedBefore = guarded.stats().degradedDecisions();
		busyNow.set(true);
		Timed first = decide(guarded, this.limit);
		assertThat(first.decision().origin()).as("the first late answer misses the 50 ms deadline").isEqualTo(Decision.Origin.UNDECIDED);
		assertThat(first.decision().allowed()).as("and is not admitted locally").isFalse();
		long giveUp = System.nanoTime() + Duration.ofSeconds(10).toNanos();
		while (guarded.stats().deadline().toMillis() < 450 && System.nanoTime() < giveUp) {
			Thread.sleep(20);
		}
		assertThat(guarded.stats().deadline()).as("three times the slowest answer (the probe's)")
			.isGreaterThanOrEqualTo(Duration.ofMillis(450));
		for (int i = 0; i < 10; i++) {
			Timed timed = decide(guarded, this.limit);
			assertThat(timed.decision().origin()).isEqualTo(Decision.Origin.BACKEND);
		}
		assertThat(guarded.breaker().state()).as("a probe answered: not an outage").isEqualTo(CircuitBreaker.State.CLOSED);
		assertThat(guarded.stats().degradedDecisions() - degradedBefore).isEqualTo(1);
		guarded.close();
	}

	@Test
	void aJvmStalledLongerThanTheMaxDeadlineIsNotAnOutageAndNothingIsDecidedOnLocalShares() throws Exception {
		// Every answer that arrives during the stall reaches the caller only when the stall ends, as on a JVM whose
		// threads get no CPU: the stall ends once the guard sent a second probe, or after 5 s.
		RateLimiterBackend redis = lettuceBackend();
		warmUp(redis);
		CompletableFuture<Void> stallEnds = new CompletableFuture<>();
		java.util.concurrent.atomic.AtomicBoolean stalled = new java.util.concurrent.atomic.AtomicBoolean();
		java.util.concurrent.atomic.AtomicInteger probesInStall = new java.util.concurrent.atomic.AtomicInteger();
		RateLimiterBackend stalling = readingAnswers(redis, (requests, answer) -> {
			if (stalled.get() && requests.get(0).limit().name().equals("limiter-probe")
					&& probesInStall.incrementAndGet() == 2) {
				stallEnds.complete(null);
			}
			return answer.thenCompose(decision -> stalled.get() ? stallEnds.thenApply(ended -> decision)
					: CompletableFuture.completedFuture(decision));
		});
		GuardedBackend guarded = GuardedBackend.builder(stalling)
			.deadline(DEADLINE)
			.maxDeadline(MAX_DEADLINE)
			.openDuration(Duration.ofMillis(300))
			.failurePolicy(requests -> FailurePolicy.LOCAL)
			.build();
		assertThat(decideUntilBackend(guarded).decision().origin()).isEqualTo(Decision.Origin.BACKEND);
		long degradedBefore = guarded.stats().degradedDecisions();

		stalled.set(true);
		CompletableFuture.delayedExecutor(5, TimeUnit.SECONDS).execute(() -> stallEnds.complete(null));
		java.util.Map<Decision.Origin, Integer> origins = new java.util.EnumMap<>(Decision.Origin.class);
		boolean opened = false;
		while (!stallEnds.isDone()) {
			origins.merge(decide(guarded, this.limit).decision().origin(), 1, Integer::sum);
			opened |= guarded.breaker().state() != CircuitBreaker.State.CLOSED;
		}
		stalled.set(false);
		System.out.println("JVM stalled past the max deadline: " + origins + ", probes sent in the stall "
				+ probesInStall.get());
		assertThat(probesInStall.get()).as("a probe without an answer is confirmed by a second one").isEqualTo(2);
		assertThat(opened).as("the circuit never opened").isFalse();
		assertThat(origins).as("decisions that missed the deadline were rejected, none admitted on a local share")
			.containsKey(Decision.Origin.UNDECIDED)
			.doesNotContainKey(Decision.Origin.LOCAL_FALLBACK);
		assertThat(decideUntilBackend(guarded).decision().origin()).isEqualTo(Decision.Origin.BACKEND);
		assertThat(guarded.breaker().state()).isEqualTo(CircuitBreaker.State.CLOSED);
		assertThat(guarded.stats().degradedDecisions() - degradedBefore)
			.isEqualTo((long) origins.getOrDefault(Decision.Origin.UNDECIDED, 0));
		guarded.close();
	}

	@Test
	void untilTheBackendFirstAnswersADecisionMayTakeTheMaxDeadline() throws Exception {
		// A cold backend (connecting, loading its script) answers its first call in 200 ms: above the 50 ms floor,
		// within the max deadline. The first decision is the backend's, not a rejection by a deadline with no history.
		RateLimiterBackend redis = lettuceBackend();
		warmUp(redis);
		Executor late = CompletableFuture.delayedExecutor(200, TimeUnit.MILLISECONDS);
		java.util.concurrent.atomic.AtomicBoolean cold = new java.util.concurrent.atomic.AtomicBoolean(true);
		RateLimiterBackend firstSlow = readingAnswers(redis, (requests, answer) -> cold.getAndSet(false)
				? answer.thenApplyAsync(decision -> decision, late) : answer);
		GuardedBackend guarded = GuardedBackend.builder(firstSlow)
			.deadline(DEADLINE)
			.maxDeadline(Duration.ofSeconds(2))
			.failurePolicy(requests -> FailurePolicy.LOCAL)
			.build();
		Timed first = decide(guarded, this.limit);
		assertThat(first.decision().origin()).isEqualTo(Decision.Origin.BACKEND);
		assertThat(first.decision().allowed()).isTrue();
		assertThat(first.millis()).isGreaterThanOrEqualTo(200);
		assertThat(guarded.stats().degradedDecisions()).isZero();
		guarded.close();
	}

	@Test
	void aProgrammingErrorIsThrownNotHiddenByTheFailurePolicy() {
		RateLimiterBackend broken = StubBackend.failingWith(new IllegalStateException("a bug"));
		GuardedBackend guarded = GuardedBackend.builder(broken).failurePolicy(requests -> FailurePolicy.OPEN).build();
		assertThatThrownBy(() -> decide(guarded, this.limit)).isInstanceOf(IllegalStateException.class).hasMessage("a bug");
		assertThat(guarded.stats().degradedDecisions()).isZero();
		assertThat(guarded.breaker().state()).isEqualTo(CircuitBreaker.State.CLOSED);
	}

	@Test
	void instancesAnnounceThemselvesAndTheLocalShareFollowsTheirCount() throws Exception {
		GuardedBackend[] instances = new GuardedBackend[3];
		for (int i = 0; i < instances.length; i++) {
			RateLimiterBackend backend = lettuceBackend();
			warmUp(backend);
			instances[i] = GuardedBackend.builder(backend)
				.maxDeadline(MAX_DEADLINE)
				.heartbeat(Duration.ofMillis(100))
				.failurePolicy(requests -> FailurePolicy.LOCAL)
				.build();
		}
		awaitInstances(instances[0], 3);
		instances[2].close();
		awaitInstances(instances[0], 2);
		assertThat(this.redis.command("PTTL", "g:instances")).as("the set expires with its announcements")
			.matches("(?s):[1-9][0-9]*\\s*");
		this.redis.freeze();
		awaitState(instances[0], CircuitBreaker.State.OPEN);
		Decision fallback = decide(instances[0], this.limit).decision();
		assertThat(fallback.origin()).isEqualTo(Decision.Origin.LOCAL_FALLBACK);
		assertThat(fallback.limit()).as("half the limit: 2 instances were alive").isEqualTo(50);
		this.redis.resume();
		instances[0].close();
		instances[1].close();
	}

	@Test
	void anInstanceThatFindsItselfAloneRightAfterRedisCameBackWaitsForTheOthersBeforeTakingTheWholeLimit()
			throws Exception {
		// The counts Redis answers: 3 instances, then (Redis back from a freeze, the others' announcements expired) 1,
		// then 3 again as the others announce themselves; later one instance really leaves.
		// The lone count lasts 12 heartbeats, four times an announcement's life: the others' circuits were still open
		// (they announce themselves when their open period ends), so it must not stand before that.
		java.util.concurrent.BlockingQueue<Integer> counts = new java.util.concurrent.LinkedBlockingQueue<>(
				List.of(3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 3, 3));
		java.util.concurrent.atomic.AtomicInteger lowest = new java.util.concurrent.atomic.AtomicInteger(3);
		GuardedBackend guarded = GuardedBackend.builder(new CountingRegistry(() -> {
			Integer next = counts.poll();
			return (next != null) ? next : 2;
		}))
			.heartbeat(Duration.ofMillis(20))
			.openDuration(Duration.ofSeconds(5))
			.failurePolicy(requests -> FailurePolicy.LOCAL)
			.build();
		while (!counts.isEmpty()) {
			if (guarded.stats().instancesKnown()) {
				lowest.accumulateAndGet(guarded.stats().instances(), Math::min);
			}
			Thread.sleep(1);
		}
		awaitInstances(guarded, 2);
		guarded.close();
		assertThat(lowest.get()).as("a lone count between two counts of 3 never stood").isEqualTo(3);
	}

	private static void awaitInstances(GuardedBackend guarded, int count) throws InterruptedException {
		long giveUp = System.nanoTime() + Duration.ofSeconds(10).toNanos();
		while (guarded.stats().instances() != count && System.nanoTime() < giveUp) {
			Thread.sleep(20);
		}
		assertThat(guarded.stats().instances()).isEqualTo(count);
		assertThat(guarded.stats().instancesKnown()).isTrue();
	}

	/**
	 * Calls sent while Redis is paused miss their deadline and are answered by the failure policy; Redis decides them
	 * once it resumes, and admits them. Nobody acts on those admissions, so their permits come back: before, each
	 * such call held a permit for a whole window (with a limit counting only failures, a captcha after one attempt).
	 */
	@org.junit.jupiter.params.ParameterizedTest(name = "{0}")
	@org.junit.jupiter.params.provider.ValueSource(strings = { "coalesced", "alone", "two limits", "Jedis" })
	void decisionsRedisMakesAfterTheirCallersStoppedWaitingGiveTheirPermitsBack(String road) throws Exception {
		JedisConnectionFactory jedis = null;
		ExecutorService calls = Executors.newCachedThreadPool();
		RateLimiterBackend redis;
		if (road.equals("Jedis")) {
			jedis = new JedisConnectionFactory(new RedisStandaloneConfiguration("127.0.0.1", this.redis.port()));
			jedis.afterPropertiesSet();
			jedis.start();
			redis = SpringDataRedisScriptExecutor.backend(jedis, Runnable::run).keyPrefix("g:").build();
		}
		else {
			redis = SpringDataRedisScriptExecutor.backend(this.lettuce, Runnable::run).keyPrefix("g:")
				.coalesce(!road.equals("alone"))
				.build();
		}
		try {
			warmUp(redis);
			GuardedBackend guarded = GuardedBackend.builder(redis)
				.deadline(DEADLINE)
				.maxDeadline(MAX_DEADLINE)
				.failurePolicy(requests -> FailurePolicy.LOCAL)
				.callExecutor(road.equals("Jedis") ? calls : null)
				.build();
			// Limits that give nothing back by themselves while the test runs: only a refund can.
			Limit bucket = TokenBucket.of("late-bucket", 100, Duration.ofDays(1));
			Limit window = io.github.limiter.algorithm.FixedWindow.of("late-window", 100, Duration.ofDays(1));
			List<LimitRequest> requests = road.equals("two limits")
					? List.of(LimitRequest.of(bucket, "late"), LimitRequest.of(window, "late"))
					: List.of(LimitRequest.of(bucket, "late"));
			assertThat(decideUntilBackend(guarded).decision().origin()).isEqualTo(Decision.Origin.BACKEND);
			Thread pause = new Thread(() -> this.redis.command("CLIENT", "PAUSE", "1000", "WRITE"));
			pause.start();
			Thread.sleep(100);
			int late = 0;
			for (int i = 0; i < 5; i++) {
				if (guarded.decide(requests, Operation.ACQUIRE).origin() == Decision.Origin.UNDECIDED) {
					late++;
				}
			}
			pause.join();
			assertThat(late).as("calls that missed their deadline while Redis was still deemed alive").isPositive();

			// A check answers what would remain after one more call: 99 on a key nobody used.
			long untouched = redis.decide(requests.stream().map(r -> LimitRequest.of(r.limit(), "untouched")).toList(),
					Operation.CHECK).remaining();
			long giveUp = System.nanoTime() + Duration.ofSeconds(10).toNanos();
			Decision state = redis.decide(requests, Operation.CHECK);
			while (state.remaining() < untouched && System.nanoTime() < giveUp) {
				Thread.sleep(50);
				state = redis.decide(requests, Operation.CHECK);
			}
			assertThat(state.remaining()).as("every permit Redis granted after its caller had gone came back")
				.isEqualTo(untouched);
			System.out.println(road + ": " + late + " calls missed their deadline; Redis holds all their permits again");
			guarded.close();
		}
		finally {
			this.redis.resume();
			calls.shutdownNow();
			if (jedis != null) {
				jedis.destroy();
			}
		}
	}

	@Test
	void aBlockingClientIsCutOffAtTheDeadlineToo() throws InterruptedException {
		JedisConnectionFactory jedis = new JedisConnectionFactory(
				new RedisStandaloneConfiguration("127.0.0.1", this.redis.port()));
		jedis.afterPropertiesSet();
		jedis.start();
		ExecutorService calls = Executors.newCachedThreadPool();
		try {
			RateLimiterBackend backend = SpringDataRedisScriptExecutor.backend(jedis, Runnable::run).keyPrefix("g:").build();
			warmUp(backend);
			GuardedBackend guarded = GuardedBackend.builder(backend)
				.deadline(DEADLINE)
				.failurePolicy(requests -> FailurePolicy.OPEN)
				.callExecutor(calls)
				.build();
			assertThat(decideUntilBackend(guarded).decision().origin()).isEqualTo(Decision.Origin.BACKEND);
			this.redis.freeze();
			Timed timed = decide(guarded, this.limit);
			assertThat(timed.millis()).isLessThan(DEADLINE.toMillis() + MARGIN_MILLIS);
			assertThat(timed.decision().origin()).isEqualTo(Decision.Origin.FAIL_OPEN);
			System.out.println("Frozen Redis, deadline 50 ms, Jedis: " + timed.millis() + " ms");
		}
		finally {
			this.redis.resume();
			calls.shutdownNow();
			jedis.destroy();
		}
	}

	@Test
	void redissonWithItsLongRetriesIsCutOffAtTheDeadline() throws InterruptedException {
		Config config = new Config();
		config.useSingleServer().setAddress(this.redis.uri());
		RedissonClient redisson = Redisson.create(config);
		try {
			GuardedBackend guarded = guard(RedissonBackend.builder(redisson).keyPrefix("g:").build(), FailurePolicy.CLOSED);
			this.redis.freeze();
			Timed timed = decide(guarded, this.limit);
			assertThat(timed.millis()).isLessThan(MAX_DEADLINE.toMillis() + MARGIN_MILLIS);
			assertThat(timed.decision().allowed()).isFalse();
			System.out.println("Frozen Redis, deadline 50 ms, Redisson: " + timed.millis() + " ms");
		}
		finally {
			this.redis.resume();
			redisson.shutdown();
		}
	}

	/**
	 * A backend that decides in this JVM and answers each announcement with the count its supplier gives, or, for a
	 * count below 1, with a refused connection.
	 */
	static final class CountingRegistry extends io.github.limiter.testsupport.LocalDecorator
			implements io.github.limiter.spi.InstanceRegistry {

		private final java.util.function.IntSupplier counts;

		CountingRegistry(java.util.function.IntSupplier counts) {
			this.counts = counts;
		}

		@Override
		public CompletionStage<Integer> announce(String instance, Duration ttl) {
			int count = this.counts.getAsInt();
			return (count > 0) ? CompletableFuture.completedFuture(count) : CompletableFuture
				.failedFuture(new io.github.limiter.spi.BackendException("connection refused", null));
		}

		@Override
		public CompletionStage<Void> withdraw(String instance) {
			return CompletableFuture.completedFuture(null);
		}

	}

	@Test
	void aLowerCountSeenBeforeAnOutageDoesNotLetTheLoneCountAfterItStandAtOnce() throws Exception {
		// A lower count seen just before an outage must not let the lone count right after it stand at once: the first
		// instance whose circuit closes after Redis lost the others' announcements counts itself alone, and an outage
		// soon after must not give it the whole of every limit (a review found the stretch of lower counts outlived
		// the outage).
		java.util.concurrent.atomic.AtomicInteger next = new java.util.concurrent.atomic.AtomicInteger(3);
		try (GuardedBackend guard = GuardedBackend.builder(new CountingRegistry(next::get))
			.heartbeat(Duration.ofMillis(100))
			.openDuration(Duration.ofSeconds(2))
			.build()) {
			awaitInstances(guard, 3);
			// One instance leaves (or one heartbeat reads 2) for 300 ms, less than an announcement's life plus an open
			// period; then an outage of 1.5 s.
			next.set(2);
			Thread.sleep(300);
			next.set(-1);
			long giveUp = System.nanoTime() + Duration.ofSeconds(10).toNanos();
			while (guard.breaker().isClosed() && System.nanoTime() < giveUp) {
				Thread.sleep(5);
			}
			assertThat(guard.breaker().isClosed()).isFalse();
			Thread.sleep(1500);
			// Redis back: this instance is the first to announce itself, the others' announcements expired.
			next.set(1);
			while (!guard.breaker().isClosed() && System.nanoTime() < giveUp + Duration.ofSeconds(10).toNanos()) {
				Thread.sleep(5);
			}
			Thread.sleep(50);
			assertThat(guard.stats().instances()).as("the lone count does not stand at once").isGreaterThan(1);
		}
	}

	@Test
	void aRedisThatRefusesWritesForWantOfMemoryIsDownForTheGuardAndUpAgainOnceItHasMemory() throws Exception {
		// Out of memory with noeviction, Redis refuses every decision's write: an outage, which the probe must see too
		// (its announcement is the first write of its script, refused like the others), so that the circuit opens and
		// the local shares decide, until Redis has memory again. (A review found the circuit closed and health UP.)
		RateLimiterBackend backend = SpringDataRedisScriptExecutor.backend(this.lettuce, Runnable::run).keyPrefix("oom:").build();
		try (GuardedBackend guard = GuardedBackend.builder(backend)
			.openDuration(Duration.ofMillis(500))
			.heartbeat(Duration.ofMillis(200))
			.failurePolicy(requests -> FailurePolicy.LOCAL)
			.build()) {
			assertThat(decidesUntil(guard, Decision.Origin.BACKEND)).as("Redis decides at first").isTrue();
			assertThat(this.redis.command("CONFIG", "SET", "maxmemory-policy", "noeviction")).startsWith("+OK");
			assertThat(this.redis.command("CONFIG", "SET", "maxmemory", "1")).startsWith("+OK");
			try {
				assertThat(decidesUntil(guard, Decision.Origin.LOCAL_FALLBACK)).as("the circuit opened: the shares decide")
					.isTrue();
				assertThat(guard.breaker().state()).isNotEqualTo(CircuitBreaker.State.CLOSED);
			}
			finally {
				assertThat(this.redis.command("CONFIG", "SET", "maxmemory", "0")).startsWith("+OK");
			}
			assertThat(decidesUntil(guard, Decision.Origin.BACKEND)).as("Redis decides again").isTrue();
		}
	}

	/** Decides until a decision has the origin, for at most 30 s. */
	private boolean decidesUntil(GuardedBackend guard, Decision.Origin origin) throws InterruptedException {
		long giveUp = System.nanoTime() + Duration.ofSeconds(30).toNanos();
		while (System.nanoTime() < giveUp) {
			if (guard.decide(List.of(LimitRequest.of(this.limit, "k")), Operation.ACQUIRE).origin() == origin) {
				return true;
			}
			Thread.sleep(20);
		}
		return false;
	}

}
