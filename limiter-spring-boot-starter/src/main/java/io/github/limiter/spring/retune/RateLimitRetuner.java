package io.github.limiter.spring.retune;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

import org.springframework.context.ApplicationEvent;
import org.springframework.context.ApplicationListener;
import org.springframework.context.SmartLifecycle;
import org.springframework.core.env.Environment;

import io.github.limiter.DurationText;
import io.github.limiter.spi.OverrideStore;
import io.github.limiter.spring.autoconfigure.RateLimiterProperties;
import io.github.limiter.spring.interceptor.AnnotationRateLimitOperationSource;
import io.github.limiter.spring.interceptor.RateLimitOperation;

/**
 * Applies new numbers to the limits of a running application, keeping their state: a limit whose numbers change
 * keeps its keys, so the permits already taken count against the new numbers.
 *
 * <p>Two sources of change, one mechanism (every limited method parsed again over the new settings, checked as at
 * startup, and swapped in at once, or nothing changes):
 * <ul>
 * <li>the environment: on Spring Cloud's {@code EnvironmentChangeEvent} (its {@code /actuator/refresh}, a config
 * server's push), {@code limiter.*} and the annotations' placeholders are read again;</li>
 * <li>runtime overrides of single limits ({@link #override}, {@code POST /actuator/ratelimiters/{name}}), which win
 * over every other setting. On a shared backend they are kept there: every instance reads them at start and every
 * {@code limiter.retune.refresh} after, so all apply them within that time and a restarted one finds them.</li>
 * </ul>
 * An invalid change is refused whole: an override with an error naming the setting and the value, an environment
 * change with that error in the log, the limits staying as they were.
 */
public class RateLimitRetuner implements ApplicationListener<ApplicationEvent>, SmartLifecycle {

	/** Spring Cloud's event, matched by name: Spring Cloud is optional. */
	static final String ENVIRONMENT_CHANGE_EVENT = "org.springframework.cloud.context.environment.EnvironmentChangeEvent";

	private static final System.Logger logger = System.getLogger(RateLimitRetuner.class.getName());

	private final AnnotationRateLimitOperationSource source;

	private final Environment environment;

	private final OverrideStore store;

	private final Duration refresh;

	private final Duration timeout;

	private RateLimiterProperties properties;

	/** Calls of the store, which may block (Jedis without Lettuce): bounded, off the caller's thread. */
	private static final java.util.concurrent.ExecutorService STORE_CALLS = io.github.limiter.spi.BlockingCalls
		.pool("limiter-overrides-store");

	/** Overrides this instance stored, counted: a read of the store that one overtook is not applied. */
	private volatile long writes;

	/** The settings read once, as they were when the application started: those in force. */
	private final Map<String, Object> atStartup;

	private Map<String, Map<String, String>> overrides = Map.of();

	/** Whether the last read of the store failed: logged once, then once when it answers again. */
	private boolean storeFailing;

	/** The last overrides read from the store of which some could not apply: logged once. */
	private Map<String, Map<String, String>> refused;

	private ScheduledExecutorService poller;

	private ScheduledFuture<?> polling;

	/**
	 * Creates a retuner.
	 * @param source the limits
	 * @param environment the environment they were read from (the retuner binds its own copy of {@code limiter.*}:
	 * Spring Cloud rebinds the properties bean in place, invalid values included)
	 * @param store where overrides are shared, or {@code null} to keep them in this instance
	 * @param refresh how often overrides are read from the store
	 * @param timeout how long a read or write of the store may take
	 */
	public RateLimitRetuner(AnnotationRateLimitOperationSource source, Environment environment, OverrideStore store,
			Duration refresh, Duration timeout) {
		this.source = source;
		this.environment = environment;
		this.properties = bind(environment);
		this.atStartup = readAtStartup(this.properties);
		this.store = store;
		this.refresh = refresh;
		this.timeout = timeout;
	}

	/**
	 * The runtime overrides in force.
	 * @return the settings overridden, by limit name then setting name
	 */
	public synchronized Map<String, Map<String, String>> overrides() {
		return this.overrides;
	}

	/**
	 * Overrides settings of one limit (replacing its earlier overrides), on every instance: checked as startup checks
	 * annotations, stored in the shared backend, then applied here; the other instances apply it at their next read.
	 * @param limit the limit's name
	 * @param settings the settings, as text ({@code max=20}, {@code window=1s}); empty to remove the overrides
	 * @return the limit as it now is; {@code null} when the overrides removed were those of a limit this application
	 * does not declare (left in the backend by a limit renamed or removed)
	 * @throws IllegalArgumentException when the limit is unknown or a setting is not one that can be overridden
	 * @throws IllegalStateException when a value is invalid (nothing changes)
	 * @throws io.github.limiter.spi.BackendException when the shared backend could not store it: not applied here (a
	 * write that timed out may still land, and then every instance applies it at its next read)
	 */
	public synchronized RateLimitOperation override(String limit, Map<String, String> settings) {
		settings.forEach((name, value) -> {
			if (value != null && value.chars().anyMatch(c -> Character.isISOControl(c) || c == '\u2028' || c == '\u2029')) {
				// Refused before anything reads it: no store keeps it, and no log line prints it raw.
				throw new IllegalStateException("Runtime override '" + name + "' of limit '" + limit
						+ "' contains a control character (a line break?): " + escaped(value));
			}
		});
		if (!current().containsKey(limit)) {
			if (settings.isEmpty() && this.store != null
					&& join(this.store::overrides, "read the runtime overrides").containsKey(limit)) {
				// Left by a limit that was renamed or removed: nothing here applies it, and nothing else could remove it.
				join(() -> this.store.override(limit, settings), "remove the overrides of limit '" + limit + "'");
				logger.log(System.Logger.Level.INFO, "Runtime overrides of '" + limit
						+ "', a limit this application does not declare, removed from the backend");
				return null;
			}
			throw new IllegalArgumentException("There is no limit named '" + limit + "'");
		}
		Map<String, Map<String, String>> wanted = new TreeMap<>(this.overrides);
		if (settings.isEmpty()) {
			wanted.remove(limit);
		}
		else {
			wanted.put(limit, Map.copyOf(settings));
		}
		AnnotationRateLimitOperationSource.Retuning retuning = this.source.retuning(this.properties, wanted);
		if (this.store != null) {
			// Stored first: an override that only this instance applied would be undone by its next read.
			try {
				join(() -> this.store.override(limit, settings), "store the overrides of limit '" + limit + "'");
			}
			catch (RuntimeException ex) {
				logger.log(System.Logger.Level.WARNING, "Limit '" + limit + "' was not retuned: " + escaped(ex.getMessage()));
				throw ex;
			}
		}
		this.source.apply(retuning);
		this.overrides = Map.copyOf(wanted);
		this.writes++;
		RateLimitOperation operation = retuning.operations().get(limit);
		logger.log(System.Logger.Level.INFO, () -> "Limit '" + limit + "' retuned at runtime: "
				+ (settings.isEmpty() ? "overrides removed" : "overrides " + new TreeMap<>(settings)) + ", now " + operation.limit()
				+ ((this.store != null) ? "; the other instances apply it within " + DurationText.of(this.refresh) : ""));
		return operation;
	}

	/** Text for a log line or an answer: control characters written as {@code \\uXXXX}, so none starts a line. */
	private static String escaped(String text) {
		if (text == null) {
			return "null";
		}
		StringBuilder out = new StringBuilder(text.length());
		text.chars().forEach(c -> out.append((Character.isISOControl(c) || c == '\u2028' || c == '\u2029')
				? String.format("\\u%04x", c) : String.valueOf((char) c)));
		return out.toString();
	}

	/**
	 * Reads {@code limiter.*} from the environment again and applies it with the overrides in force; an invalid
	 * change is logged and leaves the limits as they were.
	 * @return whether the new settings were applied
	 */
	public synchronized boolean refreshFromEnvironment() {
		try {
			RateLimiterProperties fresh = bind(this.environment);
			apply(this.source.retuning(fresh, this.overrides), "the environment changed");
			sayWhatWaitsForARestart(fresh);
			this.properties = fresh;
			// Overrides refused under the old settings may be valid under the new ones.
			this.refused = null;
			return true;
		}
		catch (RuntimeException ex) {
			// The binder's own message names the prefix only; the property and the value are in its causes.
			StringBuilder reasons = new StringBuilder(String.valueOf(ex.getMessage()));
			for (Throwable cause = ex.getCause(); cause != null && cause != cause.getCause(); cause = cause.getCause()) {
				if (cause.getMessage() != null && !reasons.toString().contains(cause.getMessage())) {
					reasons.append(": ").append(cause.getMessage());
				}
			}
			logger.log(System.Logger.Level.ERROR, "The environment changed, but the limits stay as they were: "
					+ reasons);
			return false;
		}
	}

	/**
	 * The settings read once, when the application starts: the backend and its client, the guard, the interceptor's
	 * keys and headers. A refresh applies the limits' own settings (policies, defaults, {@code shadow},
	 * {@code failure.policy}, the annotations' placeholders); the others wait for a restart, which is said.
	 */
	private static Map<String, Object> readAtStartup(RateLimiterProperties properties) {
		Map<String, Object> settings = new LinkedHashMap<>();
		settings.put("limiter.enabled", properties.isEnabled());
		settings.put("limiter.backend", properties.getBackend());
		settings.put("limiter.key-prefix", properties.getKeyPrefix());
		settings.put("limiter.empty-key", properties.getEmptyKey());
		settings.put("limiter.ipv6-prefix-length", properties.getIpv6PrefixLength());
		settings.put("limiter.headers.enabled", properties.getHeaders().isEnabled());
		settings.put("limiter.aop.order", properties.getAop().getOrder());
		settings.put("limiter.failure.deadline", properties.getFailure().getDeadline());
		settings.put("limiter.failure.max-deadline", properties.getFailure().getMaxDeadline());
		settings.put("limiter.failure.heartbeat", properties.getFailure().getHeartbeat());
		settings.put("limiter.failure.expected-instances", properties.getFailure().getExpectedInstances());
		settings.put("limiter.failure.open-duration", properties.getFailure().getOpenDuration());
		settings.put("limiter.local.clock", properties.getLocal().getClock());
		settings.put("limiter.local.max-keys", properties.getLocal().getMaxKeys());
		settings.put("limiter.redisson.token-bucket-mode", properties.getRedisson().getTokenBucketMode());
		settings.put("limiter.redis.coalesce", properties.getRedis().isCoalesce());
		settings.put("limiter.redis.denial-cache-size", properties.getRedis().getDenialCacheSize());
		settings.put("limiter.retune.refresh", properties.getRetune().getRefresh());
		settings.put("limiter.retune.timeout", properties.getRetune().getTimeout());
		return settings;
	}

	private void sayWhatWaitsForARestart(RateLimiterProperties after) {
		Map<String, Object> was = this.atStartup;
		Map<String, Object> now = readAtStartup(after);
		List<String> changed = new ArrayList<>();
		now.forEach((name, value) -> {
			if (!Objects.equals(value, was.get(name))) {
				changed.add(name + " = " + value + " (in force: " + was.get(name) + ")");
			}
		});
		if (!changed.isEmpty()) {
			logger.log(System.Logger.Level.WARNING, "The environment changed settings that are read when the "
					+ "application starts, and apply after a restart only: " + String.join(", ", changed));
		}
	}

	/**
	 * Reads the overrides in the store and applies them if they changed. The read holds no lock, so that a store that
	 * is slow to answer keeps neither the endpoint nor a refresh waiting for it.
	 */
	void readStore() {
		long writes = this.writes;
		long run = this.runs;
		Map<String, Map<String, String>> stored;
		try {
			stored = join(this.store::overrides, "read the runtime overrides");
		}
		catch (RuntimeException ex) {
			// A read that a stop interrupted failed for the stop: nothing to retry, nothing to say, even once a start
			// that followed has begun a new run.
			if (run == this.runs) {
				applyStored(null, ex, writes);
			}
			return;
		}
		applyStored(stored, null, writes);
	}

	private synchronized void applyStored(Map<String, Map<String, String>> stored, RuntimeException failure,
			long writesBefore) {
		if (failure != null) {
			if (!this.storeFailing) {
				this.storeFailing = true;
				logger.log(System.Logger.Level.WARNING, "Could not read the runtime overrides of the limits; the limits "
						+ "stay as they are and the read is retried every " + DurationText.of(this.refresh) + ": " + failure.getMessage());
			}
			return;
		}
		if (this.storeFailing) {
			this.storeFailing = false;
			logger.log(System.Logger.Level.INFO, "Runtime overrides are read from the backend again");
		}
		// A read that an override through this instance overtook is older than what this instance stored: the next
		// read applies what the store holds then.
		if (writesBefore != this.writes || stored.equals(this.overrides) || stored.equals(this.refused)) {
			return;
		}
		// Each limit's overrides on their own: one that cannot apply here (a value this version refuses) is skipped,
		// and logged once, and the others still apply.
		Map<String, Map<String, String>> usable = new TreeMap<>();
		AnnotationRateLimitOperationSource.Retuning retuning = null;
		Map<String, String> refusals = new TreeMap<>();
		for (Map.Entry<String, Map<String, String>> limit : stored.entrySet()) {
			Map<String, Map<String, String>> candidate = new TreeMap<>(usable);
			candidate.put(limit.getKey(), limit.getValue());
			try {
				retuning = this.source.retuning(this.properties, candidate);
				usable = candidate;
			}
			catch (RuntimeException ex) {
				refusals.put(limit.getKey(), ex.getMessage());
			}
		}
		if (!usable.equals(this.overrides)) {
			// The last retuning checked is the one of every usable override; none when none is usable.
			apply((retuning != null) ? retuning : this.source.retuning(this.properties, usable),
					"the runtime overrides in the backend changed");
			this.overrides = Map.copyOf(usable);
		}
		this.refused = refusals.isEmpty() ? null : stored;
		if (!refusals.isEmpty()) {
			logger.log(System.Logger.Level.ERROR, "Runtime overrides in the backend that cannot apply here are skipped, "
					+ "those limits keep their configured settings: " + refusals);
		}
	}

	/** A read of the store on the poller's thread, which an exception would stop for good. */
	private void poll() {
		try {
			readStore();
		}
		catch (RuntimeException ex) {
			logger.log(System.Logger.Level.ERROR, "Could not apply the runtime overrides of the limits", ex);
		}
	}

	private void apply(AnnotationRateLimitOperationSource.Retuning retuning, String why) {
		Map<String, RateLimitOperation> before = current();
		this.source.apply(retuning);
		Map<String, String> changed = new LinkedHashMap<>();
		retuning.operations().forEach((name, operation) -> {
			RateLimitOperation old = before.get(name);
			if (old == null || !Objects.equals(describe(old), describe(operation))) {
				changed.put(name, describe(operation));
			}
		});
		if (!changed.isEmpty()) {
			logger.log(System.Logger.Level.INFO, () -> "Limits retuned because " + why + ": " + changed);
		}
	}

	private static RateLimiterProperties bind(Environment environment) {
		return RateLimiterProperties.bind(environment);
	}

	/** The limits in force, by name. */
	private Map<String, RateLimitOperation> current() {
		return AnnotationRateLimitOperationSource.byLimit(this.source.rateLimitedMethods());
	}

	private static String describe(RateLimitOperation operation) {
		return operation.limit() + " cost " + operation.cost() + ", on failure " + operation.failurePolicy() + ", shadow "
				+ operation.shadow() + ", max wait " + operation.maxWait();
	}

	/**
	 * A call of the store, within {@code limiter.retune.timeout}. It is made on a thread of {@link #STORE_CALLS}: a
	 * store on a blocking client (Jedis without Lettuce) answers on the calling thread, and the bound must hold there
	 * too.
	 */
	private <T> T join(java.util.function.Supplier<java.util.concurrent.CompletionStage<T>> call, String what) {
		try {
			return CompletableFuture.supplyAsync(call, STORE_CALLS)
				.thenCompose(stage -> stage)
				.get(this.timeout.toMillis(), TimeUnit.MILLISECONDS);
		}
		catch (java.util.concurrent.TimeoutException ex) {
			throw new io.github.limiter.spi.BackendException("Could not " + what + " within " + DurationText.of(this.timeout)
					+ " (a write may still land: every instance applies what the backend holds at its next read)", ex);
		}
		catch (java.util.concurrent.ExecutionException ex) {
			throw new io.github.limiter.spi.BackendException("Could not " + what + ": " + ex.getCause().getMessage(),
					ex.getCause());
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new io.github.limiter.spi.BackendException("Interrupted while trying to " + what, ex);
		}
	}

	@Override
	public void onApplicationEvent(ApplicationEvent event) {
		if (event.getClass().getName().equals(ENVIRONMENT_CHANGE_EVENT)) {
			refreshFromEnvironment();
		}
	}

	@Override
	public synchronized void start() {
		if (this.store == null || this.poller != null) {
			return;
		}
		readStore();
		this.poller = Executors.newSingleThreadScheduledExecutor(runnable -> {
			Thread thread = new Thread(runnable, "limiter-overrides");
			thread.setDaemon(true);
			return thread;
		});
		long millis = Math.max(1, this.refresh.toMillis());
		this.polling = this.poller.scheduleWithFixedDelay(this::poll, millis, millis, TimeUnit.MILLISECONDS);
	}

	/** The polling runs so far: each {@link #stop()} ends one. */
	private volatile long runs;

	@Override
	public synchronized void stop() {
		this.runs++;
		if (this.poller != null) {
			this.polling.cancel(false);
			this.poller.shutdownNow();
			this.poller = null;
		}
	}

	/**
	 * Before the web server starts (Spring Boot starts it at {@code DEFAULT_PHASE - 2048}): a restarted instance
	 * serves with the overrides in force.
	 */
	@Override
	public int getPhase() {
		return SmartLifecycle.DEFAULT_PHASE - 4096;
	}

	@Override
	public synchronized boolean isRunning() {
		return this.poller != null;
	}

}
