package io.github.limiter.spring.metrics;

import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;

import io.github.limiter.Decision;
import io.github.limiter.Limit;
import io.github.limiter.LimitRequest;
import io.github.limiter.Operation;
import io.github.limiter.event.RateLimiterListener;

/**
 * Publishes decisions to Micrometer:
 * <ul>
 * <li>{@code limiter.decisions} (counter): tags {@code limit}, {@code algorithm}, {@code backend},
 * {@code operation} ({@code acquire}, {@code check}, {@code record}, {@code shadow}) and {@code outcome}:
 * {@code allowed} or {@code blocked} when the backend decided, {@code fallback-allowed} or {@code fallback-blocked}
 * when the failure policy decided because the backend could not, {@code error} when nothing could decide,
 * {@code skipped} when a {@code @RateLimit(condition)} excluded the call from the limit, {@code invalid-key} when the
 * call was refused because its key could not be had (too long, or missing with {@code limiter.empty-key=reject}). In a
 * decision over several limits, every limit counts {@code allowed} when the call passes, and only the limits that
 * rejected count {@code blocked} when it does not. A {@code blocked} shadow decision is a call that shadow mode let
 * through.</li>
 * <li>{@code limiter.decision.duration} (timer): how long the backend took, tagged {@code backend},
 * {@code operation} and {@code outcome}.</li>
 * </ul>
 * Never tagged by the resolved key (user, IP, SKU): the number of meters stays that of the limits, and at most
 * {@value #MAX_LIMITS} limit names are tagged one by one (further names, made per call in code, count as
 * {@code limit=(other)}).
 */
public class MicrometerRateLimiterListener implements RateLimiterListener {

	/** Name of the decision counter. */
	public static final String DECISIONS = "limiter.decisions";

	/** Name of the decision timer. */
	public static final String DURATION = "limiter.decision.duration";

	private final Supplier<MeterRegistry> registry;

	private final String backend;

	private final Map<String, Counter> counters = new ConcurrentHashMap<>();

	private final Map<String, Timer> timers = new ConcurrentHashMap<>();

	/** The most limit names tagged one by one. */
	static final int MAX_LIMITS = 1_000;

	/** The {@code limit} tag of the decisions of names beyond {@link #MAX_LIMITS}. */
	static final String OTHER = "(other)";

	private static final System.Logger logger = System.getLogger(MicrometerRateLimiterListener.class.getName());

	private final java.util.Set<String> names = ConcurrentHashMap.newKeySet();

	private final java.util.function.Predicate<String> declared;

	/** The declared limits seen, each tagged by its name (as many as the application declares). */
	private final java.util.Set<String> declaredNames = ConcurrentHashMap.newKeySet();

	private final java.util.concurrent.atomic.AtomicBoolean overflowSaid = new java.util.concurrent.atomic.AtomicBoolean();

	/**
	 * Creates a listener.
	 * @param registry the registry, looked up on first use ({@code null} result: nothing is published)
	 * @param backend the backend's name for the {@code backend} tag
	 */
	public MicrometerRateLimiterListener(Supplier<MeterRegistry> registry, String backend) {
		this(registry, backend, name -> false);
	}

	/**
	 * Creates a listener that tags the given limits by name whatever the other names it has seen.
	 * @param registry the registry, looked up on first use ({@code null} result: nothing is published)
	 * @param backend the backend's name for the {@code backend} tag
	 * @param declared whether a limit is declared (by {@code @RateLimit}): always tagged by its name, and not counted
	 * against the bound on names made in code
	 */
	public MicrometerRateLimiterListener(Supplier<MeterRegistry> registry, String backend,
			java.util.function.Predicate<String> declared) {
		this.registry = registry;
		this.backend = backend;
		this.declared = declared;
	}

	@Override
	public void onDecision(List<LimitRequest> requests, Operation operation, Decision decision, long nanos) {
		MeterRegistry registry = this.registry.get();
		if (registry == null) {
			return;
		}
		String prefix = decision.origin().byBackend() ? "" : "fallback-";
		List<Decision> parts = decision.parts().isEmpty() ? List.of(decision) : decision.parts();
		for (int i = 0; i < parts.size(); i++) {
			if (decision.allowed()) {
				counter(registry, requests.get(i), operation, prefix + "allowed").increment();
			}
			else if (!parts.get(i).allowed()) {
				counter(registry, requests.get(i), operation, prefix + "blocked").increment();
			}
		}
		timer(registry, operation, prefix + (decision.allowed() ? "allowed" : "blocked")).record(nanos,
				TimeUnit.NANOSECONDS);
	}

	@Override
	public void onError(List<LimitRequest> requests, Operation operation, Throwable failure, long nanos) {
		MeterRegistry registry = this.registry.get();
		if (registry == null) {
			return;
		}
		for (LimitRequest request : requests) {
			counter(registry, request, operation, "error").increment();
		}
		timer(registry, operation, "error").record(nanos, TimeUnit.NANOSECONDS);
	}

	@Override
	public void onSkipped(Limit limit, Operation operation) {
		MeterRegistry registry = this.registry.get();
		if (registry != null) {
			counter(registry, limit, operation, "skipped").increment();
		}
	}

	@Override
	public void onInvalidKey(Limit limit, Operation operation) {
		MeterRegistry registry = this.registry.get();
		if (registry != null) {
			counter(registry, limit, operation, "invalid-key").increment();
		}
	}

	private Counter counter(MeterRegistry registry, LimitRequest request, Operation operation, String outcome) {
		return counter(registry, request.limit(), operation, outcome);
	}

	private Counter counter(MeterRegistry registry, Limit limit, Operation operation, String outcome) {
		String name = tagOf(limit.name());
		String algorithm = limit.algorithm().name().toLowerCase(Locale.ROOT).replace('_', '-');
		String key = name + '\u0000' + algorithm + '\u0000' + operation + '\u0000' + outcome;
		return this.counters.computeIfAbsent(key, k -> Counter.builder(DECISIONS)
			.description("Rate limiter decisions")
			.tag("limit", name)
			.tag("algorithm", algorithm)
			.tag("backend", this.backend)
			.tag("operation", operation.name().toLowerCase(Locale.ROOT))
			.tag("outcome", outcome)
			.register(registry));
	}

	/**
	 * A limit's {@code limit} tag: its name, for every declared limit and the first {@value #MAX_LIMITS} other names;
	 * beyond, limits named in code per call (a name per user, say) are counted together as {@value #OTHER}, said once,
	 * so that the meters stay bounded.
	 */
	private String tagOf(String name) {
		if (this.names.contains(name) || this.declaredNames.contains(name)) {
			return name;
		}
		if (this.declared.test(name)) {
			this.declaredNames.add(name);
			return name;
		}
		if (this.names.size() < MAX_LIMITS) {
			this.names.add(name);
			return name;
		}
		if (this.overflowSaid.compareAndSet(false, true)) {
			logger.log(System.Logger.Level.WARNING, "Rate limiter metrics: more than " + MAX_LIMITS + " limit names seen;"
					+ " the decisions of limit '" + name + "' and of every further name are counted under limit='" + OTHER
					+ "'. Name limits by what they limit, and put the user, IP or item in the key. Said once.");
		}
		return OTHER;
	}

	private Timer timer(MeterRegistry registry, Operation operation, String outcome) {
		return this.timers.computeIfAbsent(operation + "\u0000" + outcome, k -> Timer.builder(DURATION)
			.description("Time the rate limiter backend took to decide")
			.tag("backend", this.backend)
			.tag("operation", operation.name().toLowerCase(Locale.ROOT))
			.tag("outcome", outcome)
			.register(registry));
	}

}
