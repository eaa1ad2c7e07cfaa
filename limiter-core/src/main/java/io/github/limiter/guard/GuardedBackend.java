package io.github.limiter.guard;

import java.lang.System.Logger.Level;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Supplier;

import io.github.limiter.DurationText;
import io.github.limiter.Decision;
import io.github.limiter.Limit;
import io.github.limiter.LimitRequest;
import io.github.limiter.Operation;
import io.github.limiter.TimeSource;
import io.github.limiter.algorithm.AbstractLimit;
import io.github.limiter.algorithm.FixedWindow;
import io.github.limiter.backend.local.LocalBackend;
import io.github.limiter.spi.BackendException;
import io.github.limiter.spi.BlockingCalls;
import io.github.limiter.spi.InstanceIdentity;
import io.github.limiter.spi.InstanceRegistry;
import io.github.limiter.spi.LateAdmissions;
import io.github.limiter.spi.OccasionalWarning;
import io.github.limiter.spi.RateLimiterBackend;

/**
 * A backend that always answers within a deadline, and that tells a slow backend (or a busy JVM) from a dead one
 * before it stops using it.
 *
 * <p><b>Deadline.</b> A decision waits for the backend at most the {@link AdaptiveDeadline}: three times the slowest
 * answer of the last ten seconds, between {@link Builder#deadline} and {@link Builder#maxDeadline} (the latter until
 * the backend first answered a decision, since the first decisions connect, load scripts and run code this JVM has
 * not run yet; a probe's answer does not count). A JVM that gets
 * busy makes every answer later and the deadline follows, so busyness alone does not turn decisions into fallbacks.
 * On expiry (checked every millisecond on the heartbeat thread while calls are in flight, rather than by a timer task
 * per call; failed on a thread of a pool of its own) the decision's future is completed with a
 * {@link TimeoutException}, which tells the backend to drop it if it has not been sent yet.
 *
 * <p><b>Detection.</b> A decision that fails with a {@link BackendException} or misses its deadline is a suspicion:
 * it starts a probe (one at a time) and is answered by the failure policy. A probe that fails with a
 * {@link BackendException} (a refused or broken connection) opens the {@link CircuitBreaker}. Silence takes more: a
 * probe without an answer within {@code maxDeadline} is followed by a second one, and the circuit opens only when that
 * one gets no answer either and nothing else the backend was asked (a decision, or the first probe, however late)
 * answered since the first was sent. A JVM stalled for longer than {@code maxDeadline} (a long collection, starved
 * CPUs) reads its answers late but reads them, so it is not taken for a dead backend and does not start deciding on
 * local shares beside a backend that goes on deciding. A probe that answers closes the circuit; so does the late
 * answer of a probe whose silence opened it (a JVM starved for longer than both probes). Any other
 * exception is a bug and is thrown, never hidden by the policy. Probes also run as a heartbeat
 * ({@link Builder#heartbeat}), so an outage is seen without traffic and the health reflects the last contact.
 *
 * <p><b>Policy.</b> While the circuit is open, {@link FailurePolicy#LOCAL} decides on a local share of each limit:
 * the limit divided by the number of instances, which the heartbeat counts when the backend is an
 * {@link InstanceRegistry} (or {@link Builder#expectedInstances} when set). While the circuit is closed a missed
 * deadline is not an outage: the backend may still decide the call, so {@code LOCAL} rejects it
 * ({@link Decision.Origin#UNDECIDED}) instead of admitting it a second time locally. {@link FailurePolicy#OPEN}
 * admits and {@link FailurePolicy#CLOSED} rejects in both cases.
 *
 * <p>A client that blocks the calling thread ({@link RateLimiterBackend#blocksCaller()}, Jedis) is called on another
 * thread, so that the caller can stop waiting. Transitions are logged once each; {@link #stats()} reports the rest.
 */
public final class GuardedBackend implements RateLimiterBackend, AutoCloseable {

	private static final System.Logger logger = System.getLogger(GuardedBackend.class.getName());

	/** Calls rejected during an outage for costing more than their local share holds, said at most every 10 s. */
	private final OccasionalWarning largerThanShare = new OccasionalWarning(GuardedBackend.class);

	/**
	 * Heartbeats of every guard, and the checks of their deadlines: one daemon thread, which sends probes, never waits
	 * for an answer and runs nothing of what follows a missed deadline.
	 */
	private static final ScheduledThreadPoolExecutor HEARTBEATS = heartbeats();

	/** Where the calls that missed their deadline are failed, and what follows runs: threads only while some do. */
	private static final Executor MISSED_DEADLINES = daemonThreads("limiter-missed-deadline");

	/**
	 * The deadlines of every guard's calls, checked every millisecond on the heartbeat thread while calls are in
	 * flight, and not at all after a tenth of a second without.
	 */
	private static final Deadlines DEADLINES = new Deadlines(HEARTBEATS, MISSED_DEADLINES,
			TimeUnit.MILLISECONDS.toNanos(1), 100);

	/** Where calls to a blocking client run when no executor was given, so that the deadline holds; bounded. */
	private static final Executor BLOCKING_CALLS = BlockingCalls.pool("limiter-blocking-call");

	/** What a probe checks on a backend that keeps no instance registry: reads one key, writes nothing. */
	private static final List<LimitRequest> PROBE = List
		.of(LimitRequest.of(FixedWindow.of("limiter-probe", 1, Duration.ofSeconds(1)), "probe"));

	/** Most limits whose local share is remembered; beyond, the shares are computed afresh. */
	private static final int MAX_SHARES = 10_000;

	/** Longest a probe waits before the backend first answered one. */
	private static final int FIRST_CONTACT_SECONDS = 5;

	/** At most one log line per this interval about failures that a probe found were no outage. */
	private static final long SUSPICION_LOG_NANOS = TimeUnit.SECONDS.toNanos(10);

	private final RateLimiterBackend delegate;

	private final InstanceRegistry registry;

	private final String instance = InstanceIdentity.nextToken();

	private final AdaptiveDeadline deadline;

	private final CircuitBreaker breaker;

	private final Function<List<LimitRequest>, FailurePolicy> policies;

	private final int expectedInstances;

	private final Duration heartbeat;

	private final Duration openDuration;

	private final Executor callExecutor;

	private final LocalBackend local;

	private final Map<Limit, Share> shares = new ConcurrentHashMap<>();

	/** Instances counted by the last heartbeat that answered; 0 while unknown. */
	private final AtomicInteger liveInstances = new AtomicInteger();


	/** When the instance counts began to come in lower than {@link #liveInstances}, 0 when they do not. */
	private volatile long lowerSince;

	private final AtomicLong failures = new AtomicLong();

	private final AtomicLong degraded = new AtomicLong();

	/** Failed decisions since the last log line about them. */
	private final AtomicLong unlogged = new AtomicLong();

	private final AtomicLong lastSuspicionLog = new AtomicLong(System.nanoTime() - SUSPICION_LOG_NANOS);

	/** Gives back, where it was taken, what was admitted after its caller stopped waiting. */
	private final LateAdmissions late;

	private final AtomicLong degradedWhenOpened = new AtomicLong();

	/** The last failure of a decision or probe, and whether it was slowness rather than an error, kept as one. */
	private final AtomicReference<LastFailure> lastFailure = new AtomicReference<>();

	private final AtomicReference<Probe> lastProbe = new AtomicReference<>();

	private volatile ScheduledFuture<?> heartbeats;

	private volatile boolean closed;

	/** Whether this instance sent an announcement, which a close withdraws. */
	private volatile boolean announced;

	/** Whether the backend ever answered a probe or a decision. */
	private volatile boolean answered;

	/**
	 * Whether the backend ever answered a decision: a probe's answer says the backend is there, not that this JVM has
	 * run a decision's code and the backend loaded its script.
	 */
	private volatile boolean decided;

	/**
	 * Whether the deadline has learnt from an answer that tells the latency to come (a warm decision, or a warm probe
	 * answered in its time): until then a decision may take up to maxDeadline, as the cold ones do.
	 */
	private volatile boolean learnt;

	/** Monotonic time of the backend's last answer to anything (a decision, a probe, a late probe). */
	private volatile long lastAnswerNanos = System.nanoTime() - TimeUnit.DAYS.toNanos(1);

	private GuardedBackend(Builder builder) {
		this.delegate = builder.delegate;
		this.late = new LateAdmissions(GuardedBackend.class, this::refundAsync);
		this.registry = (builder.delegate instanceof InstanceRegistry known) ? known : null;
		this.deadline = new AdaptiveDeadline(builder.deadline, builder.maxDeadline);
		this.breaker = new CircuitBreaker(builder.openDuration, System::nanoTime);
		this.policies = builder.policies;
		this.expectedInstances = builder.expectedInstances;
		this.heartbeat = builder.heartbeat;
		this.openDuration = builder.openDuration;
		this.callExecutor = (builder.callExecutor == null && this.delegate.blocksCaller()) ? BLOCKING_CALLS
				: builder.callExecutor;
		this.local = LocalBackend.create(TimeSource.SYSTEM, builder.localMaxKeys);
	}

	/** Daemon threads of the given name, started when a task comes and none is free, ended after a minute idle. */
	private static Executor daemonThreads(String name) {
		return Executors.newCachedThreadPool(daemon(name));
	}

	private static ThreadFactory daemon(String name) {
		return (runnable) -> {
			Thread thread = new Thread(runnable, name);
			thread.setDaemon(true);
			return thread;
		};
	}

	private static ScheduledThreadPoolExecutor heartbeats() {
		ScheduledThreadPoolExecutor executor = new ScheduledThreadPoolExecutor(1, daemon("limiter-heartbeat"));
		executor.setRemoveOnCancelPolicy(true);
		return executor;
	}

	/**
	 * Starts a builder.
	 * @param delegate the backend to guard
	 * @return a builder
	 */
	public static Builder builder(RateLimiterBackend delegate) {
		return new Builder(Objects.requireNonNull(delegate, "delegate must not be null"));
	}

	/**
	 * The guarded backend.
	 * @return the delegate
	 */
	public RateLimiterBackend delegate() {
		return this.delegate;
	}

	/**
	 * The circuit breaker.
	 * @return the breaker
	 */
	public CircuitBreaker breaker() {
		return this.breaker;
	}

	@Override
	public CompletionStage<Decision> decideAsync(List<LimitRequest> requests, Operation operation) {
		if (!this.breaker.isClosed()) {
			probe("a decision while the circuit is open");
			return CompletableFuture.completedFuture(fallback(requests, operation));
		}
		long start = System.nanoTime();
		// Until the backend first answered a decision, nothing says how long one takes (a probe runs other code and
		// another script), and the first calls connect and load the script: they may take up to maxDeadline rather than
		// be rejected by a floor meant for a warm backend. The cold answers are not learnt from, so that the calls after
		// them may take maxDeadline too, until one answer says how long a warm one takes (a slow Redis is learnt from
		// its first warm answer, not from rejections at the floor).
		boolean warm = this.decided;
		long limit = this.learnt ? this.deadline.nanos(start) : this.deadline.ceiling().toNanos();
		CompletableFuture<Decision> call = call(() -> this.delegate.decideAsync(requests, operation), late -> {
			if (operation.acquires()) {
				this.late.giveBack(requests, late);
			}
		});
		DEADLINES.within(call, limit);
		CompletableFuture<Decision> decided = call.handle((decision, failure) -> {
			if (failure == null) {
				// A remembered rejection never left this JVM: it tells neither the backend's latency nor that it is alive.
				if (decision.origin() != Decision.Origin.REMEMBERED) {
					// A cold decision (connecting, loading the script, code run for the first time) says nothing of the
					// latency to come: learnt from, it would hold the deadline at its ceiling for its whole window.
					answered(start, System.nanoTime(), warm);
					if (!this.decided) {
						this.decided = true;
					}
				}
				return decision;
			}
			suspect(failure, limit);
			return fallback(requests, operation);
		});
		if (decided.isDone()) {
			return decided;
		}
		// The caller holds a future of the guard's own: one that stops waiting completes it, and what was admitted for
		// it afterwards goes back where it was taken (the backend, or a local share).
		CompletableFuture<Decision> answer = new CompletableFuture<>();
		decided.whenComplete((decision, failure) -> this.late.deliver(answer, requests, operation, decision, failure));
		return answer;
	}

	/** Calls the backend; a blocking client on another thread, so that the caller can stop waiting. */
	private <T> CompletableFuture<T> call(Supplier<CompletionStage<T>> call) {
		return call(call, late -> {
		});
	}

	/**
	 * Calls the backend, and hands an answer that came after the caller stopped waiting to {@code late}. (A client that
	 * does not block completes the future the caller holds itself, and so sees itself when nobody waits any more.)
	 */
	private <T> CompletableFuture<T> call(Supplier<CompletionStage<T>> call, Consumer<T> late) {
		if (this.callExecutor == null) {
			try {
				return call.get().toCompletableFuture();
			}
			catch (BackendException ex) {
				return CompletableFuture.failedFuture(ex);
			}
		}
		CompletableFuture<T> answer = new CompletableFuture<>();
		try {
			this.callExecutor.execute(() -> {
				if (answer.isDone()) {
					// The caller gave up before a thread was free: nothing to send.
					return;
				}
				try {
					CompletableFuture<T> sent = call.get().toCompletableFuture();
					// A caller that gives up tells the backend, as it does without an executor: a call still waiting
					// there is not sent, and an admission that comes back later is given back by the backend itself.
					answer.whenComplete((value, failure) -> {
						if (failure != null) {
							sent.completeExceptionally(failure);
						}
					});
					sent.whenComplete((value, failure) -> {
						if (failure != null) {
							answer.completeExceptionally(failure);
						}
						else if (!answer.complete(value)) {
							late.accept(value);
						}
					});
				}
				catch (Throwable ex) {
					answer.completeExceptionally(ex);
				}
			});
		}
		catch (RejectedExecutionException ex) {
			answer.completeExceptionally(new BackendException("no thread to call the blocking Redis client", ex));
		}
		return answer;
	}

	/** Keeps the last failure, and whether it was slowness, as one: the warning pairs them. */
	private void failed(Failure failure, Throwable cause) {
		this.lastFailure.set(new LastFailure(failure, slowness(cause)));
	}

	/** A failure, and whether it was slowness (a missed deadline, a timeout, no thread free) rather than an error. */
	private record LastFailure(Failure failure, boolean slow) {

	}

	/**
	 * Whether a failure tells of slowness rather than an error: a missed deadline, a client's own timeout, or no
	 * thread free to make the call (a busy JVM), anywhere in its causes.
	 */
	private static boolean slowness(Throwable cause) {
		for (Throwable current = cause; current != null; current = (current.getCause() != current) ? current.getCause()
				: null) {
			if (current instanceof TimeoutException || current instanceof java.util.concurrent.RejectedExecutionException
					|| current.getClass().getSimpleName().endsWith("TimeoutException")) {
				return true;
			}
		}
		return false;
	}

	/**
	 * A decision failed: a backend failure or a missed deadline starts a probe and leaves the answer to the policy;
	 * anything else is a bug and is thrown.
	 */
	private void suspect(Throwable failure, long deadlineNanos) {
		Throwable cause = unwrap(failure);
		String reason;
		if (cause instanceof TimeoutException) {
			reason = "no answer within " + TimeUnit.NANOSECONDS.toMillis(deadlineNanos) + " ms";
		}
		else if (cause instanceof BackendException) {
			reason = OccasionalWarning.reason(cause);
		}
		else if (cause instanceof RuntimeException bug) {
			throw bug;
		}
		else if (cause instanceof Error error) {
			throw error;
		}
		else {
			throw new CompletionException(cause);
		}
		this.failures.incrementAndGet();
		this.unlogged.incrementAndGet();
		failed(new Failure(Instant.now(), reason), cause);
		probe("a decision got " + reason);
	}

	/**
	 * The backend answered a call sent at {@code start}: it is alive, and the deadline learns the latency if it tells
	 * one to expect.
	 */
	private void answered(long start, long end, boolean typical) {
		if (typical) {
			this.deadline.record(end - start, end);
			if (!this.learnt) {
				this.learnt = true;
			}
		}
		// Written only when it moves by a millisecond, so that busy callers do not all write one field.
		if (end - this.lastAnswerNanos > 1_000_000) {
			this.lastAnswerNanos = end;
		}
		if (!this.answered) {
			this.answered = true;
		}
		if (this.silence != null) {
			closeOnLateAnswer();
		}
	}

	/**
	 * One beat of the heartbeat: the probe, and, while the circuit is closed, at most every
	 * {@value #LOCAL_SWEEP_SECONDS} s a sweep of the local shares' expired keys, which no new key starts once an outage
	 * is over (a flood during one left tens of megabytes there). What has not expired stays: an outage that comes back
	 * soon finds the shares as they were.
	 */
	private void beat() {
		probe("the heartbeat");
		long now = System.nanoTime();
		if (this.breaker.isClosed() && now - this.lastLocalSweep >= TimeUnit.SECONDS.toNanos(LOCAL_SWEEP_SECONDS)) {
			this.lastLocalSweep = now;
			this.local.sweepExpired();
		}
	}

	private static final int LOCAL_SWEEP_SECONDS = 10;

	/** When the heartbeat last swept the local shares (its beats, one at a time, may run on different threads). */
	private volatile long lastLocalSweep = System.nanoTime();

	/**
	 * Sends the probe if it is due (none in flight; when open, the open period is over). It announces this instance
	 * when the backend keeps an instance registry, and checks a key otherwise.
	 */
	private void probe(String trigger) {
		if (this.closed || !this.breaker.tryStartProbe()) {
			return;
		}
		sendProbe(trigger, System.nanoTime(), false);
	}

	/**
	 * Sends one probe of the probe that started at {@code since}. Its answer is awaited on a copy, so that a late
	 * answer still reaches {@link #answered} and shows that the backend is alive.
	 */
	private void sendProbe(String trigger, long since, boolean confirming) {
		long start = System.nanoTime();
		CompletableFuture<Integer> answer;
		if (this.registry != null) {
			this.announced = true;
		}
		try {
			answer = call(() -> (this.registry != null)
					? this.registry.announce(this.instance, instanceTtl())
					: this.delegate.decideAsync(PROBE, Operation.CHECK).thenApply(decision -> 0));
		}
		catch (RuntimeException ex) {
			answer = CompletableFuture.failedFuture(ex);
		}
		long timeout = probeTimeout().toNanos();
		boolean warm = this.decided;
		answer.whenComplete((count, failure) -> {
			if (failure == null) {
				// An answer later than the probe's own timeout measured a stall (a frozen backend, a stopped JVM), and
				// one sent before any decision was answered a cold start: neither is the latency to come. Both show
				// the backend alive without holding the deadline at its ceiling.
				long end = System.nanoTime();
				answered(start, end, warm && end - start <= timeout);
			}
		});
		DEADLINES.within(answer.copy(), timeout).whenComplete((count, failure) -> {
			if (this.closed) {
				// Closed meanwhile (its client is shut down next, which fails the probe): nothing is down.
				return;
			}
			long end = System.nanoTime();
			Throwable cause = (failure != null) ? unwrap(failure) : null;
			if (cause == null) {
				probeAnswered(count, end - start, end, trigger);
			}
			else if (!(cause instanceof TimeoutException) || !this.breaker.isClosed()) {
				probeFailed(cause, trigger, false);
			}
			else if (this.lastAnswerNanos - since >= 0) {
				this.breaker.probeInconclusive();
				notDown("a probe got no answer within " + probeTimeout().toMillis()
						+ " ms, but the backend answered other calls meanwhile", end);
			}
			else if (!confirming) {
				sendProbe(trigger, since, true);
			}
			else {
				probeFailed(cause, trigger + ", and a second probe", true);
				// An answer read between the circuit's opening and the silence's record closed nothing: it does now.
				if (this.lastAnswerNanos - since >= 0) {
					closeOnLateAnswer();
				}
			}
		});
	}

	/**
	 * When the circuit opened on the silence of two probes. A JVM whose client thread cannot run (a machine short of
	 * CPU) reads no answer for seconds while the backend answers every call in time; the answers then arrive all at
	 * once.
	 */
	private record Silence(long opened) {
	}

	private volatile Silence silence;

	/**
	 * When a late answer last closed the circuit. A backend that keeps pausing for longer than two probes (a Redis
	 * paused again and again) looks the same from here as a starved JVM: its answers come late, after every pause. So
	 * silence that opens the circuit again within an open period of such a close is taken as that backend's, and
	 * only a probe closes the circuit then, as for any outage: otherwise it would flap at every pause, and each
	 * decision would wait out its deadline in the next pause instead of being decided on the local share.
	 */
	private volatile long lastLateClose = System.nanoTime() - TimeUnit.DAYS.toNanos(1);

	/**
	 * Closes the circuit that silence opened when an answer is read after all (a probe's: the probes are awaited on
	 * a copy of their futures, while a decision's future is completed by its deadline, so its late answer is
	 * dropped): the backend was alive, and only slow to be heard (this JVM short of CPU to read its answers,
	 * or a pause of the backend that is over), so decisions go to it again at once instead of after the open period.
	 * Only that opening is undone: once a later probe failed, or a probe got an error, the circuit stays open.
	 */
	private void closeOnLateAnswer() {
		Silence opened = this.silence;
		if (this.closed || opened == null) {
			return;
		}
		long openFor = System.nanoTime() - opened.opened();
		if (!this.breaker.answeredLate(opened.opened())) {
			return;
		}
		this.silence = null;
		this.lastLateClose = System.nanoTime();
		logger.log(Level.INFO, "Rate limiter backend answered after all, " + millis(openFor) + " ms after its silence "
				+ "opened the circuit: circuit closed, decisions go to it again (the silence was this JVM reading "
				+ "its answers late, or a pause of the backend that is over; " + (this.degraded.get()
						- this.degradedWhenOpened.get()) + " decisions were made by the failure policy while it was open)");
		this.unlogged.set(0);
	}

	private void probeAnswered(int count, long latency, long now, String trigger) {
		this.lastProbe.set(new Probe(Instant.now(), Duration.ofNanos(latency), null));
		if (count > 0 && counted(count, now)) {
			int previous = this.liveInstances.getAndSet(count);
			if (previous != count) {
				logger.log(Level.INFO, "Rate limiter: " + count + ((count == 1) ? " instance shares" : " instances share")
						+ " the limits" + ((previous > 0) ? " (was " + previous + ")" : "")
						+ ((this.expectedInstances > 0) ? "; limiter.failure.expected-instances=" + this.expectedInstances
								+ " sizes the local shares instead" : "; during an outage each decides on 1/" + count
										+ " of every limit"));
			}
		}
		if (this.breaker.probeSucceeded()) {
			this.silence = null;
			logger.log(Level.INFO, "Rate limiter backend answered a probe in " + millis(latency)
					+ " ms: circuit closed, decisions go to it again (" + (this.degraded.get() - this.degradedWhenOpened.get())
					+ " decisions were made by the failure policy while it was open)");
			this.unlogged.set(0);
			return;
		}
		if (this.unlogged.get() > 0) {
			notDown("the backend answered a probe in " + millis(latency) + " ms", now);
		}
	}

	/**
	 * Whether a count of instances stands. A higher one stands at once (smaller local shares can only admit less). A
	 * lower one stands once the counts have stayed lower for as long as a live instance may go without announcing
	 * itself: an instance's time to live, plus an open period of the circuit, during which an instance only probes
	 * (and announces itself) when the period ends. After Redis was frozen or restarted, the first instance whose
	 * circuit closes finds the others' announcements expired and counts itself alone until they announce themselves,
	 * each at the end of its own open period, and an outage meanwhile must not give it the whole of every limit.
	 */
	private boolean counted(int count, long now) {
		if (count >= this.liveInstances.get()) {
			this.lowerSince = 0;
			return true;
		}
		long since = this.lowerSince;
		if (since == 0) {
			this.lowerSince = now;
			return false;
		}
		if (now - since < instanceTtl().plus(this.openDuration).toNanos()) {
			return false;
		}
		this.lowerSince = 0;
		return true;
	}

	/**
	 * Logs, at most every 10 s, that failures were seen but the backend is not down.
	 */
	private void notDown(String evidence, long now) {
		long last = this.lastSuspicionLog.get();
		if (now - last < SUSPICION_LOG_NANOS || !this.lastSuspicionLog.compareAndSet(last, now)) {
			return;
		}
		long failed = this.unlogged.getAndSet(0);
		LastFailure recent = this.lastFailure.get();
		Failure lastFailure = (recent != null) ? recent.failure() : null;
		// A decision that got an error (a script refused on a key holding another kind of data, say) is not slowness:
		// calls on the same keys meet it again until its cause is mended.
		String why = (recent == null || recent.slow()) ? "a slow backend or a busy JVM"
				: "the last failure is an error, not slowness, and calls that meet its cause again will fail alike";
		logger.log(Level.WARNING, "Rate limiter: " + failed + " decisions failed or missed their deadline"
				+ ((failed > 0 && lastFailure != null) ? " (last: " + lastFailure.message() + ")" : "")
				+ " and were answered by their failure policy, but " + evidence
				+ ", so it is not down: " + why + ". Deadline now " + millis(this.deadline.nanos(now))
				+ " ms (limiter.failure.deadline " + this.deadline.floor().toMillis() + " ms to max-deadline "
				+ this.deadline.ceiling().toMillis() + " ms).");
	}

	/**
	 * A probe failed: the circuit opens, or stays open for another period. {@code silent}: it got no answer, nor did
	 * the probe before it, so a late answer may still close the circuit ({@link #closeOnLateAnswer}), unless the last
	 * such close is less than an open period old.
	 */
	private void probeFailed(Throwable cause, String trigger, boolean silent) {
		String reason = (cause instanceof TimeoutException) ? "no answer within " + probeTimeout().toMillis() + " ms"
				: OccasionalWarning.reason(cause);
		// A lower count stands only once the counts stayed lower: a probe that got none breaks that stretch, and the
		// first lower count after an outage starts it again (the others' announcements may have expired meanwhile).
		this.lowerSince = 0;
		this.silence = null;
		boolean opened = this.breaker.probeFailed();
		long openedAt = this.breaker.openedAt();
		if (opened) {
			this.degradedWhenOpened.set(this.degraded.get());
		}
		failed(new Failure(Instant.now(), "probe: " + reason), cause);
		this.lastProbe.set(new Probe(Instant.now(), null, reason));
		if (opened) {
			int instances = instances();
			// Every policy is named: the guard knows the policy of each decision, not which ones the limits use.
			logger.log(Level.WARNING, "Rate limiter backend failed a probe after " + trigger + " (" + reason
					+ "): circuit open, decisions follow their failure policy (open: admitted unchecked; closed: "
					+ "refused; local: 1/" + instances + " of each limit, "
					+ ((this.expectedInstances > 0) ? "limiter.failure.expected-instances"
							: (this.liveInstances.get() > 0) ? "instances last counted"
									: "no instance count reached the backend yet, so each instance takes the whole limit")
					+ ((instances > 1) ? "; windows of fewer than " + instances + " permits reject" : "")
					+ ") until a probe, every " + this.openDuration.toMillis() + " ms, gets an answer");
		}
		else {
			logger.log(Level.DEBUG, "Rate limiter backend still down: " + reason);
		}
		// Recorded once the opening is logged, so that a close on a late answer is logged after it; the caller then
		// looks for an answer read meanwhile.
		if (silent && System.nanoTime() - this.lastLateClose >= this.openDuration.toNanos()) {
			this.silence = new Silence(openedAt);
		}
	}

	/**
	 * How long a probe waits: {@code maxDeadline}, but until the backend first answered at least
	 * {@value #FIRST_CONTACT_SECONDS} s, since the first contact also connects and loads classes; a backend that
	 * refuses connections fails it at once all the same.
	 */
	private Duration probeTimeout() {
		Duration ceiling = this.deadline.ceiling();
		if (this.answered) {
			return ceiling;
		}
		Duration first = Duration.ofSeconds(FIRST_CONTACT_SECONDS);
		return (ceiling.compareTo(first) > 0) ? ceiling : first;
	}

	private Duration instanceTtl() {
		Duration interval = (this.heartbeat != null) ? this.heartbeat : Duration.ofSeconds(1);
		return interval.multipliedBy(3);
	}

	/** The number of instances that share the limits, as far as this one knows: at least 1. */
	private int instances() {
		if (this.expectedInstances > 0) {
			return this.expectedInstances;
		}
		return Math.max(1, this.liveInstances.get());
	}

	private Decision fallback(List<LimitRequest> requests, Operation operation) {
		this.degraded.incrementAndGet();
		FailurePolicy policy = this.policies.apply(requests);
		long now = TimeSource.SYSTEM.nowMicros();
		switch (policy) {
			case OPEN:
				return combine(requests, request -> Decision.of(request.limit().name(), true, request.limit().capacity(),
						request.limit().capacity() - request.cost(), 0, 0, 0, now, null), Decision.Origin.FAIL_OPEN);
			case CLOSED:
				return reject(requests, nextProbeMicros(), now, Decision.Origin.FAIL_CLOSED);
			default:
				if (this.breaker.isClosed()) {
					// Not an outage: the backend may yet decide this call, so a local admission could be a second one.
					return reject(requests, this.deadline.floor().toNanos() / 1000, now, Decision.Origin.UNDECIDED);
				}
				List<LimitRequest> shares = shares(requests, false);
				if (shares == null) {
					// A count per window smaller than the instances (or a call larger than its share) has no share that
					// holds it: reject until Redis is back.
					return reject(requests, nextProbeMicros(), now, Decision.Origin.LOCAL_FALLBACK);
				}
				Decision decision = this.local.decide(shares, operation);
				return (decision.allowed() ? decision : retryingAtTheNextProbe(decision))
					.withOrigin(Decision.Origin.LOCAL_FALLBACK);
		}
	}

	/**
	 * When a call the policy rejected may retry: at the next probe, which may find the backend back; while a probe is
	 * on its way, once it has had its time to answer (a probe that fails opens the circuit again for
	 * {@code openDuration}; one that succeeds has closed it by then).
	 */
	private long nextProbeMicros() {
		Duration wait = (this.breaker.state() == CircuitBreaker.State.HALF_OPEN) ? probeTimeout()
				: this.breaker.remainingOpen();
		return Math.max(wait.toNanos(), this.deadline.floor().toNanos()) / 1000;
	}

	/**
	 * A local share's rejection retries no later than the next probe: the backend, back by then, may have room that the
	 * share has not (a weekly share would otherwise tell its caller to come back in a week).
	 */
	private Decision retryingAtTheNextProbe(Decision rejected) {
		long probe = nextProbeMicros();
		if (rejected.retryAfterMicros() <= probe && rejected.resetAfterMicros() <= probe) {
			return rejected;
		}
		List<Decision> parts = new ArrayList<>();
		for (Decision part : rejected.parts().isEmpty() ? List.of(rejected) : rejected.parts()) {
			parts.add(part.allowed() ? part : Decision.of(part.limitName(), false, part.limit(), part.remaining(),
					Math.min(part.retryAfterMicros(), probe), Math.min(part.resetAfterMicros(), probe), 0,
					part.timeMicros(), null));
		}
		return Decision.combine(parts);
	}

	/**
	 * The requests on this instance's local shares of their limits, or {@code null} when a limit has none (fewer
	 * permits per window than instances) or a call costs more than its share holds: charging it the share's capacity
	 * would let the instances together admit more than the limit. For a refund, whose share may have shrunk since the
	 * call was admitted (more instances counted), the cost is what the share can hold now.
	 */
	private List<LimitRequest> shares(List<LimitRequest> requests, boolean refund) {
		List<LimitRequest> shares = new ArrayList<>(requests.size());
		for (LimitRequest request : requests) {
			Limit share = share(request.limit());
			if (share == null) {
				return null;
			}
			if (request.cost() > share.capacity() && !refund) {
				this.largerThanShare.warn(() -> "Rate limit '" + request.limit().name() + "': a call of cost "
						+ request.cost() + " is more than this instance's local share holds (" + share.capacity() + " of "
						+ request.limit().capacity() + ", shared among " + instances() + " instances); such calls are"
						+ " rejected while the backend is down");
				return null;
			}
			shares.add(new LimitRequest(share, request.key(), Math.min(request.cost(), share.capacity())));
		}
		return shares;
	}

	/**
	 * A rejection nobody decided against the limit's state: it can tell only when to retry, which is also when the
	 * limit may have room again.
	 */
	private static Decision reject(List<LimitRequest> requests, long retryAfterMicros, long now, Decision.Origin origin) {
		return combine(requests, request -> Decision.of(request.limit().name(), false, request.limit().capacity(), 0,
				retryAfterMicros, retryAfterMicros, 0, now, null), origin);
	}

	/** This instance's share of a limit, or {@code null} when it has none; a limit per instance is all its own. */
	private Limit share(Limit limit) {
		if (limit.scope() == Limit.Scope.PER_INSTANCE) {
			return limit;
		}
		int instances = instances();
		Share share = this.shares.get(limit);
		if (share == null || share.instances != instances) {
			if (!(limit instanceof AbstractLimit<?> known)) {
				throw new IllegalArgumentException("cannot size a local fallback for " + limit);
			}
			if (this.shares.size() >= MAX_SHARES) {
				this.shares.clear();
			}
			share = new Share(instances, known.divisibleAmong(instances) ? dividedOrNone(known, instances) : null);
			this.shares.put(limit, share);
		}
		return share.limit;
	}

	/**
	 * A limit divided among the instances, or none when its share cannot be a limit (a yearly bucket among a dozen
	 * instances refills once in more than ten years): its calls are then rejected until the backend is back, as those
	 * of a window smaller than the instances are. Said once per limit and count, as shares are kept.
	 */
	private static Limit dividedOrNone(AbstractLimit<?> limit, int instances) {
		try {
			return limit.dividedBy(instances);
		}
		catch (IllegalArgumentException ex) {
			logger.log(Level.WARNING, "Rate limit '" + limit.name() + "' has no local share among " + instances
					+ " instances (" + ex.getMessage() + "): while the backend is down, its calls are rejected");
			return null;
		}
	}

	private static Decision combine(List<LimitRequest> requests, Function<LimitRequest, Decision> each,
			Decision.Origin origin) {
		List<Decision> parts = new ArrayList<>(requests.size());
		for (LimitRequest request : requests) {
			parts.add(each.apply(request));
		}
		return Decision.combine(parts).withOrigin(origin);
	}

	private static Throwable unwrap(Throwable failure) {
		Throwable cause = failure;
		while (cause instanceof CompletionException && cause.getCause() != null) {
			cause = cause.getCause();
		}
		return cause;
	}

	private static long millis(long nanos) {
		return TimeUnit.NANOSECONDS.toMillis(nanos);
	}

	@Override
	public boolean blocksCaller() {
		return false;
	}

	/**
	 * Gives the permits back where they were taken: to the backend for its own decisions (within the max deadline; not
	 * while its circuit is open), to the local shares for theirs. A decision of the failure policy or a remembered
	 * rejection took nothing.
	 */
	@Override
	public CompletionStage<Void> refundAsync(List<LimitRequest> requests, Decision acquired) {
		RateLimiterBackend.parts(requests, acquired);
		switch (acquired.origin()) {
			case BACKEND: {
				if (!this.breaker.isClosed()) {
					return CompletableFuture.failedFuture(new BackendException("could not give back the permits of "
							+ acquired.limitName() + ": the backend is down (circuit " + this.breaker.state() + ")", null));
				}
				return DEADLINES.within(call(() -> this.delegate.refundAsync(requests, acquired)),
						this.deadline.ceiling().toNanos())
					.exceptionally(failure -> {
						throw new BackendException("could not give back the permits of " + acquired.limitName(),
								unwrap(failure));
					});
			}
			case LOCAL_FALLBACK: {
				List<LimitRequest> shares = shares(requests, true);
				return (shares != null) ? this.local.refundAsync(shares, acquired) : CompletableFuture.completedFuture(null);
			}
			default:
				return CompletableFuture.completedFuture(null);
		}
	}

	/** The shortest wait for a reset. */
	private static final Duration RESET_WAIT = Duration.ofSeconds(2);

	@Override
	public CompletionStage<Void> resetAsync(Limit limit, String key) {
		this.local.resetAsync(limit, key);
		// As long as a read of a key's state may take (a reset is an operator's, who would rather wait than retry).
		long waitNanos = Math.max(this.deadline.ceiling().toNanos(), RESET_WAIT.toNanos());
		return DEADLINES.within(call(() -> this.delegate.resetAsync(limit, key)), waitNanos)
			.exceptionally(failure -> {
				Throwable cause = unwrap(failure);
				String why = (cause instanceof TimeoutException)
						? ": no answer within " + TimeUnit.NANOSECONDS.toMillis(waitNanos) + " ms" : "";
				throw new BackendException("could not reset " + limit.name() + " for '" + key + "'" + why, cause);
			});
	}

	private GuardedBackend start() {
		if (this.heartbeat != null) {
			long period = this.heartbeat.toNanos();
			this.heartbeats = HEARTBEATS.scheduleAtFixedRate(this::beat, 0, period, TimeUnit.NANOSECONDS);
		}
		return this;
	}

	/**
	 * Stops the heartbeat and withdraws this instance from the registry (waiting at most {@code maxDeadline}), so that
	 * the other instances count one fewer at once.
	 */
	@Override
	public void close() {
		if (this.closed) {
			return;
		}
		this.closed = true;
		ScheduledFuture<?> running = this.heartbeats;
		if (running != null) {
			running.cancel(false);
		}
		// Once an announcement was sent, not once its answer was seen: one answered just before the close may not
		// have been read yet, and would then count this instance for three heartbeats more.
		if (this.registry != null && this.announced && this.breaker.isClosed()) {
			try {
				DEADLINES.within(call(() -> this.registry.withdraw(this.instance)), this.deadline.ceiling().toNanos())
					.join();
			}
			catch (RuntimeException ex) {
				logger.log(Level.INFO, "Could not withdraw this instance from the rate limiter's instance count: the other instances count it until its announcement expires (three heartbeats): " + ex);
			}
		}
	}

	/**
	 * What happened so far, for the endpoint and health. Reading it costs no call to the backend.
	 * @return the statistics
	 */
	public Stats stats() {
		LastFailure last = this.lastFailure.get();
		return new Stats(this.breaker.state(), this.failures.get(), this.degraded.get(),
				(last != null) ? last.failure() : null, this.lastProbe.get(), instances(), this.liveInstances.get() > 0 || this.expectedInstances > 0,
				Duration.ofNanos(this.deadline.nanos(System.nanoTime())));
	}

	/**
	 * Counters of a guarded backend.
	 *
	 * @param breaker the breaker's state
	 * @param failures decisions that failed or missed their deadline
	 * @param degradedDecisions decisions made by the failure policy
	 * @param lastFailure the last failure of a decision or probe, or {@code null}
	 * @param lastProbe the last probe, or {@code null} before the first
	 * @param instances the number of instances the local shares are sized for
	 * @param instancesKnown whether that number was counted or configured (otherwise it is 1 by default)
	 * @param deadline the deadline of a decision now
	 */
	public record Stats(CircuitBreaker.State breaker, long failures, long degradedDecisions, Failure lastFailure,
			Probe lastProbe, int instances, boolean instancesKnown, Duration deadline) {

	}

	/**
	 * A failure of the guarded backend.
	 *
	 * @param at when
	 * @param message what
	 */
	public record Failure(Instant at, String message) {

	}

	/**
	 * A probe of the guarded backend.
	 *
	 * @param at when it ended
	 * @param latency how long it took to answer, or {@code null} when it failed
	 * @param failure why it failed, or {@code null} when it answered
	 */
	public record Probe(Instant at, Duration latency, String failure) {

	}

	private record Share(int instances, Limit limit) {

	}

	/**
	 * Builder of {@link GuardedBackend}.
	 */
	public static final class Builder {

		private final RateLimiterBackend delegate;

		private Duration deadline = Duration.ofMillis(50);

		private Duration maxDeadline = Duration.ofSeconds(1);

		private Duration openDuration = Duration.ofSeconds(5);

		private Duration heartbeat;

		private Function<List<LimitRequest>, FailurePolicy> policies = requests -> FailurePolicy.LOCAL;

		private int expectedInstances;

		private int localMaxKeys = LocalBackend.DEFAULT_MAX_KEYS;

		private Executor callExecutor;

		private Builder(RateLimiterBackend delegate) {
			this.delegate = delegate;
		}

		/**
		 * Shortest deadline of a decision (50 ms by default): the deadline is three times the slowest answer of the
		 * last ten seconds, never less than this.
		 * @param deadline a positive duration
		 * @return this builder
		 */
		public Builder deadline(Duration deadline) {
			this.deadline = positive("deadline", deadline);
			return this;
		}

		/**
		 * Longest deadline of a decision, and how long a probe waits before the backend counts as down (1 s by
		 * default; raised to the shortest deadline if below it).
		 * @param maxDeadline a positive duration
		 * @return this builder
		 */
		public Builder maxDeadline(Duration maxDeadline) {
			this.maxDeadline = positive("max deadline", maxDeadline);
			return this;
		}

		/**
		 * How long the circuit stays open before the next probe (5 s by default).
		 * @param openDuration a positive duration
		 * @return this builder
		 */
		public Builder openDuration(Duration openDuration) {
			this.openDuration = positive("open duration", openDuration);
			return this;
		}

		/**
		 * Probes the backend at this interval and, when it keeps an {@link InstanceRegistry}, announces this instance
		 * (alive for three intervals) and counts the instances; every 10 s it also sweeps what an outage's local shares
		 * left. Off by default; the starter sets 1 s.
		 * @param interval a positive duration, or {@code null} for none
		 * @return this builder
		 */
		public Builder heartbeat(Duration interval) {
			if (interval != null && positive("heartbeat interval", interval).compareTo(Duration.ofMillis(1)) < 0) {
				// Its thread also checks every guard's deadlines: probes without pause would take a core.
				throw new IllegalArgumentException("heartbeat interval must be at least 1 ms but was " + interval);
			}
			this.heartbeat = interval;
			return this;
		}

		/**
		 * The failure policy of each decision ({@link FailurePolicy#LOCAL} by default).
		 * @param policies the policy of a decision's requests
		 * @return this builder
		 */
		public Builder failurePolicy(Function<List<LimitRequest>, FailurePolicy> policies) {
			this.policies = Objects.requireNonNull(policies);
			return this;
		}

		/**
		 * Number of instances that share the limits, which divides them for the {@link FailurePolicy#LOCAL} policy
		 * during an outage. By default (0) the heartbeat counts them; 1 until a first count.
		 * @param instances at least 1, or 0 to count
		 * @return this builder
		 */
		public Builder expectedInstances(int instances) {
			if (instances < 0) {
				throw new IllegalArgumentException("expected instances must be 0 (counted) or positive but was " + instances);
			}
			this.expectedInstances = instances;
			return this;
		}

		/**
		 * Most keys the local fallback keeps.
		 * @param maxKeys a positive number
		 * @return this builder
		 */
		public Builder localMaxKeys(int maxKeys) {
			if (maxKeys < 1) {
				throw new IllegalArgumentException("local max keys must be positive but was " + maxKeys);
			}
			this.localMaxKeys = maxKeys;
			return this;
		}

		/**
		 * Where to call a backend whose client blocks the calling thread, so that the deadline holds.
		 * @param executor the executor, {@code null} to call on the caller's thread (fine for non-blocking clients)
		 * @return this builder
		 */
		public Builder callExecutor(Executor executor) {
			this.callExecutor = executor;
			return this;
		}

		private static Duration positive(String what, Duration duration) {
			if (duration == null || duration.isNegative() || duration.isZero()) {
				throw new IllegalArgumentException(what + " must be positive but was " + DurationText.of(duration));
			}
			if (duration.compareTo(LONGEST) > 0) {
				throw new IllegalArgumentException(what + " must be at most " + LONGEST.toDays() + " days but was "
						+ DurationText.of(duration));
			}
			return duration;
		}

		/** Longest duration of a setting, as of a limit's: counted in nanoseconds, much longer would overflow. */
		private static final Duration LONGEST = Duration.ofDays(3660);

		/**
		 * Builds the backend and starts its heartbeat.
		 * @return the backend
		 */
		public GuardedBackend build() {
			return new GuardedBackend(this).start();
		}

	}

}
