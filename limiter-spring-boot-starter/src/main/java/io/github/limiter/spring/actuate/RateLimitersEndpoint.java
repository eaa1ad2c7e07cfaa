package io.github.limiter.spring.actuate;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import org.springframework.boot.actuate.endpoint.Access;
import org.springframework.boot.actuate.endpoint.OperationResponseBody;
import org.springframework.boot.actuate.endpoint.InvalidEndpointRequestException;
import org.springframework.boot.actuate.endpoint.annotation.DeleteOperation;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;
import org.springframework.boot.actuate.endpoint.annotation.WriteOperation;
import org.springframework.boot.actuate.endpoint.web.WebEndpointResponse;
import org.springframework.lang.Nullable;

import io.github.limiter.Decision;
import io.github.limiter.Limit;
import io.github.limiter.LimitRequest;
import io.github.limiter.Operation;
import io.github.limiter.RateLimiter;
import io.github.limiter.algorithm.TokenBucket;
import io.github.limiter.guard.GuardedBackend;
import io.github.limiter.spi.BackendException;
import io.github.limiter.spi.OccasionalWarning;
import io.github.limiter.spi.RateLimiterBackend;
import io.github.limiter.spring.interceptor.RateLimitOperation;
import io.github.limiter.spring.interceptor.RateLimitOperationSource;
import io.github.limiter.spring.interceptor.RateLimitedMethod;
import io.github.limiter.spring.retune.RateLimitRetuner;

/**
 * The {@code ratelimiters} Actuator endpoint:
 * <ul>
 * <li>{@code GET /actuator/ratelimiters}: every limit, with its methods, algorithm, numbers and the backend: those
 * declared by {@code @RateLimit}, and those the application has used in code through the {@link RateLimiter} bean
 * ({@code origin} {@code code}, seen since startup, see {@link LimitsInUse});</li>
 * <li>{@code GET /actuator/ratelimiters/{name}}: one limit (and the state of its shared key if it has no key
 * expression);</li>
 * <li>{@code GET /actuator/ratelimiters/{name}/{key}}: the live state of one key;</li>
 * <li>{@code DELETE /actuator/ratelimiters/{name}/{key}}: forgets one key;</li>
 * <li>{@code POST /actuator/ratelimiters/{name}} with settings such as {@code {"max": "20", "window": "1s"}}: overrides
 * them at runtime, on every instance sharing the backend, keeping the limit's state (see {@link RateLimitRetuner});
 * </li>
 * <li>{@code DELETE /actuator/ratelimiters/{name}}: removes the runtime overrides of a limit.</li>
 * </ul>
 * A limit used in code is read and reset as a declared one is; its numbers are set where it is built, so it is not
 * retuned here.
 * The last three write: the endpoint is read-only by default, and writes are enabled with
 * {@code management.endpoint.ratelimiters.access=unrestricted}. Each limit shows where each of its settings comes
 * from: {@code runtime override 'max'}, {@code attribute 'max'}, {@code limiter.policies.api.max} or
 * {@code limiter.defaults.max}.
 * Reading a key's state consumes nothing and is not counted in the metrics.
 */
@Endpoint(id = "ratelimiters", defaultAccess = Access.READ_ONLY)
public class RateLimitersEndpoint {

	private static final System.Logger logger = System.getLogger(RateLimitersEndpoint.class.getName());

	/** Longest wait for the store's answer to a key's state. */
	private static final long READ_TIMEOUT_MILLIS = 2000;

	/** Reads a store that blocks its caller: a daemon thread per read, which an operator asks for now and then. */
	private static final java.util.concurrent.Executor READS = task -> {
		Thread thread = new Thread(task, "limiter-endpoint-read");
		thread.setDaemon(true);
		thread.start();
	};

	private final RateLimitOperationSource source;

	private final RateLimiter rateLimiter;

	private final String backend;

	private final RateLimitRetuner retuner;

	private final LimitsInUse inUse;

	private final OccasionalWarning unavailable = new OccasionalWarning(RateLimitersEndpoint.class);

	/**
	 * Creates the endpoint.
	 * @param source where limits are found
	 * @param rateLimiter the rate limiter
	 * @param backend the backend's name
	 * @param retuner what applies runtime overrides, or {@code null} for none
	 * @param inUse the limits the rate limiter has decided, or {@code null} to list only the declared ones
	 */
	public RateLimitersEndpoint(RateLimitOperationSource source, RateLimiter rateLimiter, String backend,
			RateLimitRetuner retuner, LimitsInUse inUse) {
		this.source = source;
		this.rateLimiter = rateLimiter;
		this.backend = backend;
		this.retuner = retuner;
		this.inUse = inUse;
	}

	/**
	 * Every limit.
	 * @return the limits
	 */
	@ReadOperation
	public LimitsDescriptor limits() {
		GuardedBackend.Stats stats = (this.rateLimiter.backend() instanceof GuardedBackend guarded) ? guarded.stats() : null;
		return new LimitsDescriptor(this.backend, (stats != null) ? FailureDescriptor.of(stats) : null,
				new ArrayList<>(collect().values()));
	}

	/**
	 * One limit, or one key's state when {@code ?key=} names a key, which a path cannot hold: one with a {@code /} (an
	 * IPv6 client's network, {@code ::/64}), or the empty key.
	 * @param name the limit's name
	 * @param key a key, or {@code null} for the limit
	 * @return the limit, or the key's state as {@link #key} answers it; a 404 when the limit is unknown
	 */
	@ReadOperation
	public WebEndpointResponse<Object> limit(@Selector String name, @Nullable String key) {
		if (key != null) {
			return key(name, key);
		}
		LimitDescriptor descriptor = limit(name);
		return (descriptor != null) ? new WebEndpointResponse<>(descriptor)
				: new WebEndpointResponse<>(WebEndpointResponse.STATUS_NOT_FOUND);
	}

	/**
	 * One limit.
	 * @param name the limit's name
	 * @return the limit, or {@code null} when unknown
	 */
	public LimitDescriptor limit(String name) {
		LimitDescriptor descriptor = collect().get(name);
		if (descriptor != null && "".equals(descriptor.keyExpression())) {
			try {
				return descriptor.withState(state(descriptor.limit, ""));
			}
			catch (BackendException ex) {
				// The limit's definition stands without its state; the key's own read says why the state is missing.
				return descriptor;
			}
		}
		return descriptor;
	}

	/**
	 * The state of one key of a limit, as its store holds it: read from the store itself, never from the failure
	 * policy (a read is not a decision, and a local share's count is not the key's state).
	 * @param name the limit's name
	 * @param key the key
	 * @return the state; a 404 when the limit is unknown, a 503 when the store cannot be read
	 */
	@ReadOperation
	public WebEndpointResponse<Object> key(@Selector String name, @Selector String key) {
		LimitDescriptor descriptor = collect().get(name);
		if (descriptor == null) {
			return new WebEndpointResponse<>(WebEndpointResponse.STATUS_NOT_FOUND);
		}
		try {
			return new WebEndpointResponse<>(state(descriptor.limit, key));
		}
		catch (BackendException ex) {
			return unavailable(name, key, ex, "");
		}
	}

	/**
	 * Forgets one key of a limit.
	 * @param name the limit's name
	 * @param key the key
	 * @return no content; a 404 when the limit is unknown, a 503 when the store could not be reached in time
	 */
	@DeleteOperation
	public WebEndpointResponse<Object> reset(@Selector String name, @Selector String key) {
		LimitDescriptor descriptor = collect().get(name);
		if (descriptor == null) {
			return new WebEndpointResponse<>(WebEndpointResponse.STATUS_NOT_FOUND);
		}
		try {
			this.rateLimiter.reset(descriptor.limit, request(descriptor.limit, key).key());
		}
		catch (BackendException ex) {
			return unavailable(name, key, ex, "; the reset may still land once the store answers");
		}
		return new WebEndpointResponse<>(WebEndpointResponse.STATUS_NO_CONTENT);
	}

	/**
	 * A 503 for a key the store could not read or reset in time, said in the log as the operator's answer: at most
	 * every 10 s (reads repeated during an outage would log one line each), the key's control characters escaped (a
	 * key is whatever the request's path held).
	 */
	private WebEndpointResponse<Object> unavailable(String name, String key, BackendException ex, String aftermath) {
		String error = ex.getMessage() + ((ex.getCause() != null) ? ": " + ex.getCause() : "") + aftermath;
		this.unavailable.warn(() -> "Rate limit '" + loggable(name) + "', key '" + loggable(key) + "': " + loggable(error));
		return new WebEndpointResponse<>(Map.of("limit", name, "key", key, "error", error),
				WebEndpointResponse.STATUS_SERVICE_UNAVAILABLE);
	}

	/** Text from a request, for a log line: control characters escaped, at most 256 characters. */
	static String loggable(String text) {
		StringBuilder line = new StringBuilder(Math.min(text.length(), 256) + 8);
		int i = 0;
		for (; i < text.length() && line.length() < 256; i++) {
			char c = text.charAt(i);
			if (Character.isISOControl(c) || c == '\u2028' || c == '\u2029') {
				line.append(String.format("\\u%04x", (int) c));
			}
			else {
				line.append(c);
			}
		}
		return (i < text.length()) ? line.append("...").toString() : line.toString();
	}

	/** A request for a key given in the path: one the limiter refuses (too long) is a 400, not a 500. */
	private static LimitRequest request(Limit limit, String key) {
		try {
			return LimitRequest.of(limit, key);
		}
		catch (IllegalArgumentException ex) {
			throw new InvalidEndpointRequestException(ex.getMessage(), ex.getMessage());
		}
	}

	/**
	 * Overrides settings of a limit at runtime, on every instance that shares the backend (replacing its earlier
	 * overrides). Only the numbers and the behaviour can change, not the algorithm, the scope or the calendar.
	 * @param name the limit's name
	 * @param max permits per window
	 * @param window the window, or refill period
	 * @param capacity a token bucket's capacity
	 * @param warmup a token bucket's warm-up
	 * @param burst a leaky bucket's burst
	 * @param delay a leaky bucket's delay
	 * @param nodelay a leaky bucket's nodelay
	 * @param cost permits a call takes
	 * @param maxWait how long a call may wait for a permit
	 * @param shadow whether the limit only counts
	 * @param onFailure the failure policy
	 * @return the limit as it now is
	 */
	@WriteOperation
	public WebEndpointResponse<Object> retune(@Selector String name, @Nullable String max, @Nullable String window,
			@Nullable String capacity, @Nullable String warmup, @Nullable String burst,
			@Nullable String delay, @Nullable String nodelay, @Nullable String cost,
			@Nullable String maxWait, @Nullable String shadow, @Nullable String onFailure) {
		Map<String, String> settings = new LinkedHashMap<>();
		String[] values = { max, window, capacity, warmup, burst, delay, nodelay, cost, maxWait, shadow, onFailure };
		String[] names = { "max", "window", "capacity", "warmup", "burst", "delay", "nodelay", "cost", "maxWait",
				"shadow", "onFailure" };
		for (int i = 0; i < names.length; i++) {
			if (values[i] != null) {
				settings.put(names[i], values[i]);
			}
		}
		if (settings.isEmpty()) {
			String message = "Give at least one of " + List.of(names) + " to override (other fields are not read); DELETE "
					+ "/actuator/ratelimiters/" + name + " removes the overrides";
			// Spring Boot does not show the reason of a 400 by default: the operator finds it here.
			logger.log(System.Logger.Level.WARNING, "Refused to retune limit '" + loggable(name) + "': " + loggable(message));
			throw new InvalidEndpointRequestException(message, message);
		}
		return override(name, settings);
	}

	/**
	 * Removes the runtime overrides of a limit, on every instance that shares the backend; or, given a {@code key}
	 * parameter, forgets that key instead: the way to reset a key that a path cannot hold, the empty key (a limit
	 * without a key, or the bucket of empty keys) or one with a {@code /}.
	 * @param name the limit's name
	 * @param key the key to reset, or {@code null} to remove the overrides
	 * @return the limit as it now is, or the key's state after the reset
	 */
	@DeleteOperation
	public WebEndpointResponse<Object> removeOverridesOrReset(@Selector String name, @Nullable String key) {
		if (key != null) {
			LimitDescriptor descriptor = collect().get(name);
			if (descriptor == null) {
				return new WebEndpointResponse<>(WebEndpointResponse.STATUS_NOT_FOUND);
			}
			try {
				this.rateLimiter.reset(descriptor.limit, request(descriptor.limit, key).key());
			}
			catch (BackendException ex) {
				return unavailable(name, key, ex, "; the reset may still land once the store answers");
			}
			try {
				return new WebEndpointResponse<>(state(descriptor.limit, key));
			}
			catch (BackendException ex) {
				return unavailable(name, key, ex, "");
			}
		}
		return override(name, Map.of());
	}

	/**
	 * Overrides a limit: the limit as it now is, a 404 for a limit that does not exist, a 400 for an override that
	 * cannot apply, or a 503 (the retuner logged why) when the backend could not store it.
	 */
	private WebEndpointResponse<Object> override(String name, Map<String, String> settings) {
		if (this.retuner == null) {
			throw new InvalidEndpointRequestException("Limits cannot be retuned in this application", "no retuner");
		}
		try {
			this.retuner.override(name, settings);
		}
		catch (IllegalArgumentException | IllegalStateException ex) {
			LimitDescriptor inCode = collect().get(name);
			if (inCode == null) {
				// No such limit, and no overrides stored under its name: as a read of it answers.
				return new WebEndpointResponse<>(WebEndpointResponse.STATUS_NOT_FOUND);
			}
			String message = (inCode != null && inCode.getOrigin().equals(LimitDescriptor.CODE))
					? "Limit '" + name + "' is used in code through the RateLimiter bean, not declared by @RateLimit: its"
							+ " numbers are set where it is built, and have no runtime overrides"
					: ex.getMessage();
			// Spring Boot does not show the reason of a 400 by default: the operator finds it here.
			logger.log(System.Logger.Level.WARNING, "Refused to retune limit '" + loggable(name) + "' with "
					+ loggable(settings.toString()) + ": " + loggable(message));
			throw new InvalidEndpointRequestException(message, message);
		}
		catch (BackendException ex) {
			return new WebEndpointResponse<>(Map.of("limit", name, "error", ex.getMessage()),
					WebEndpointResponse.STATUS_SERVICE_UNAVAILABLE);
		}
		LimitDescriptor limit = collect().get(name);
		return new WebEndpointResponse<>((limit != null) ? limit
				: Map.of("limit", name, "removed", "the stored overrides of a limit this application does not declare"));
	}

	/**
	 * A key's state, read from the store behind the guard within {@value #READ_TIMEOUT_MILLIS} ms.
	 * @throws BackendException when the store does not answer in time
	 */
	private KeyState state(Limit limit, String key) {
		RateLimiterBackend backend = this.rateLimiter.backend();
		RateLimiterBackend store = (backend instanceof GuardedBackend guarded) ? guarded.delegate() : backend;
		Decision check = check(store, request(limit, key), limit, key);
		// A check reports what would remain after one more call; the state is what remains now.
		long available = check.allowed() ? check.remaining() + 1 : check.remaining();
		// The key is full again when a call of its whole capacity would fit: a check of that cost says when, on every
		// algorithm (the check of one permit would count, in its reset-after, the permit it only pretended to take: a
		// bucket one interval more, a sliding log a whole window).
		long resetAfter = (available >= limit.capacity()) ? 0
				: check(store, new LimitRequest(limit, key, limit.capacity()), limit, key).retryAfter().toMillis();
		return new KeyState(limit.name(), key, limit.capacity(), available, resetAfter, check.retryAfter().toMillis());
	}

	/** A check of one request, asked of the store within {@value #READ_TIMEOUT_MILLIS} ms. */
	private static Decision check(RateLimiterBackend store, LimitRequest request, Limit limit, String key) {
		List<LimitRequest> requests = List.of(request);
		// A store that blocks its caller (Jedis) is asked on a thread of its own, so that the wait stays bounded here.
		CompletableFuture<Decision> asked = store.blocksCaller()
				? CompletableFuture.supplyAsync(() -> store.decide(requests, Operation.CHECK), READS)
				: store.decideAsync(requests, Operation.CHECK).toCompletableFuture();
		try {
			return asked.get(READ_TIMEOUT_MILLIS, TimeUnit.MILLISECONDS);
		}
		catch (TimeoutException ex) {
			throw new BackendException("could not read " + limit.name() + " for '" + key + "'",
					new TimeoutException("no answer within " + READ_TIMEOUT_MILLIS + " ms"));
		}
		catch (ExecutionException ex) {
			throw new BackendException("could not read " + limit.name() + " for '" + key + "'", ex.getCause());
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new BackendException("interrupted while reading " + limit.name() + " for '" + key + "'", ex);
		}
	}

	/** The declared limits, then those used in code under other names. */
	private Map<String, LimitDescriptor> collect() {
		Map<String, LimitDescriptor> limits = new LinkedHashMap<>();
		for (RateLimitedMethod method : this.source.rateLimitedMethods()) {
			for (RateLimitOperation operation : method.operations()) {
				limits.computeIfAbsent(operation.limit().name(), name -> new LimitDescriptor(operation, this.backend))
					.methods()
					.add(method.method().getDeclaringClass().getName() + "." + method.method().getName());
			}
		}
		if (this.inUse != null) {
			this.inUse.limits().forEach((name, limit) -> limits.putIfAbsent(name, new LimitDescriptor(limit, this.backend)));
		}
		return limits;
	}

	/**
	 * All limits.
	 *
	 * @param backend the backend's name
	 * @param failures how the backend has been doing: circuit state, failures, decisions made without it (absent for
	 * the local backend)
	 * @param limits the limits
	 */
	public record LimitsDescriptor(String backend, FailureDescriptor failures, List<LimitDescriptor> limits)
			implements OperationResponseBody {

	}

	/**
	 * How the backend has been doing.
	 *
	 * @param circuit the circuit breaker's state
	 * @param failures calls that failed or missed the deadline
	 * @param degradedDecisions decisions the failure policy made
	 * @param lastFailure the last failure, or {@code null}
	 * @param lastFailureAt when, or {@code null}
	 * @param deadlineMillis the deadline of a decision now
	 * @param instances the number of instances the local fallback shares are sized for
	 * @param instancesCounted whether that number was counted (or configured) rather than the default of 1
	 */
	public record FailureDescriptor(String circuit, long failures, long degradedDecisions, String lastFailure,
			String lastFailureAt, long deadlineMillis, int instances, boolean instancesCounted) {

		static FailureDescriptor of(GuardedBackend.Stats stats) {
			return new FailureDescriptor(stats.breaker().name(), stats.failures(), stats.degradedDecisions(),
					(stats.lastFailure() != null) ? stats.lastFailure().message() : null,
					(stats.lastFailure() != null) ? stats.lastFailure().at().toString() : null,
					stats.deadline().toMillis(), stats.instances(), stats.instancesKnown());
		}

	}

	/**
	 * One limit, as declared, or as last used in code.
	 */
	public static final class LimitDescriptor implements OperationResponseBody {

		/** The origin of a limit declared by {@code @RateLimit}. */
		static final String ANNOTATION = "annotation";

		/** The origin of a limit used in code through the {@link RateLimiter} bean. */
		static final String CODE = "code";

		private final transient Limit limit;

		private final String origin;

		private final String name;

		private final String algorithm;

		private final long capacity;

		private final String window;

		private final String scope;

		private final String keyExpression;

		private final Long cost;

		private final String policy;

		private final String onFailure;

		private final boolean shadow;

		private final String backend;

		private final Map<String, String> sources;

		private final List<String> methods;

		private final KeyState state;

		LimitDescriptor(RateLimitOperation operation, String backend) {
			this(ANNOTATION, operation.limit(), operation.keyExpression(), operation.cost(), operation.policy(),
					operation.failurePolicy().name(), operation.shadow(), backend, operation.settingSources(),
					new ArrayList<>(), null);
		}

		/** A limit used in code: its keys, cost and failure policy are the calls' own, and not known here. */
		LimitDescriptor(Limit limit, String backend) {
			this(CODE, limit, null, null, null, null, false, backend, Map.of(), List.of(), null);
		}

		private LimitDescriptor(String origin, Limit limit, String keyExpression, Long cost, String policy,
				String onFailure, boolean shadow, String backend, Map<String, String> sources, List<String> methods,
				KeyState state) {
			this.origin = origin;
			this.limit = limit;
			this.name = limit.name();
			this.algorithm = limit.algorithm().name();
			this.capacity = limit.capacity();
			this.window = limit.window().toString();
			this.scope = limit.scope().name();
			this.keyExpression = keyExpression;
			this.cost = cost;
			this.policy = policy;
			this.onFailure = onFailure;
			this.shadow = shadow;
			this.backend = backend;
			this.sources = sources;
			this.methods = methods;
			this.state = state;
		}

		LimitDescriptor withState(KeyState state) {
			return new LimitDescriptor(this.origin, this.limit, this.keyExpression, this.cost, this.policy,
					this.onFailure, this.shadow, this.backend, this.sources, this.methods, state);
		}

		public String getName() {
			return this.name;
		}

		/**
		 * Where the limit comes from.
		 * @return {@code annotation} for a limit declared by {@code @RateLimit}; {@code code} for one the application
		 * has used through the {@link RateLimiter} bean, whose key expression, cost, policy and failure policy are
		 * then absent (each call gives its own)
		 */
		public String getOrigin() {
			return this.origin;
		}

		public String getAlgorithm() {
			return this.algorithm;
		}

		public long getCapacity() {
			return this.capacity;
		}

		public String getWindow() {
			return this.window;
		}

		/**
		 * The limit with all its numbers, as the library describes it.
		 * @return for example {@code TokenBucket[api: capacity 20, 20 per PT1S]}
		 */
		public String getDefinition() {
			return this.limit.toString();
		}

		/**
		 * A token bucket's warm-up period, absent for other limits and buckets without one.
		 * @return an ISO-8601 duration, or {@code null}
		 */
		public String getWarmup() {
			return (this.limit instanceof TokenBucket bucket && !bucket.warmup().isZero()) ? bucket.warmup().toString()
					: null;
		}

		public String getScope() {
			return this.scope;
		}

		public String getKeyExpression() {
			return this.keyExpression;
		}

		String keyExpression() {
			return this.keyExpression;
		}

		public Long getCost() {
			return this.cost;
		}

		public String getPolicy() {
			return this.policy;
		}

		public String getOnFailure() {
			return this.onFailure;
		}

		public boolean isShadow() {
			return this.shadow;
		}

		public String getBackend() {
			return this.backend;
		}

		/**
		 * Where each setting comes from: the annotation's attribute, a policy's or the defaults' property (settings
		 * left to their built-in default are absent).
		 * @return the origins, by setting name
		 */
		public Map<String, String> getSources() {
			return this.sources;
		}

		public List<String> getMethods() {
			return this.methods;
		}

		List<String> methods() {
			return this.methods;
		}

		public KeyState getState() {
			return this.state;
		}

	}

	/**
	 * The live state of one key.
	 *
	 * @param limit the limit's name
	 * @param key the key
	 * @param capacity the limit's capacity
	 * @param available permits a call could take now
	 * @param resetAfterMillis time until the limit is full again
	 * @param retryAfterMillis time until one more call could pass, 0 if it can now
	 */
	public record KeyState(String limit, String key, long capacity, long available, long resetAfterMillis,
			long retryAfterMillis) implements OperationResponseBody {

	}

}
