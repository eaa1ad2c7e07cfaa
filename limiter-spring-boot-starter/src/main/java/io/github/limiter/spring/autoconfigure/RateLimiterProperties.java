package io.github.limiter.spring.autoconfigure;

import java.time.Duration;
import java.time.ZoneId;
import java.util.LinkedHashMap;
import java.util.Map;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.DeprecatedConfigurationProperty;
import org.springframework.boot.context.properties.bind.AbstractBindHandler;
import org.springframework.boot.context.properties.bind.BindContext;
import org.springframework.boot.context.properties.bind.BindHandler;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.bind.handler.NoUnboundElementsBindHandler;
import org.springframework.boot.context.properties.source.ConfigurationProperty;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName;
import org.springframework.boot.context.properties.source.UnboundElementsSourceFilter;
import org.springframework.boot.origin.Origin;
import org.springframework.core.Ordered;

import io.github.limiter.DurationText;
import io.github.limiter.Limit;
import io.github.limiter.TimeSource;
import io.github.limiter.algorithm.Algorithm;
import io.github.limiter.algorithm.CalendarUnit;
import io.github.limiter.backend.redisson.RedissonBackend;
import io.github.limiter.guard.FailurePolicy;

/**
 * Configuration of the rate limiter, under {@code limiter.*}. A name it does not know fails startup through
 * {@link #bind}, which the starter reads its settings with (at startup and on a refresh); the bean itself ignores such
 * names, so that Spring Cloud's rebinding of every configuration properties bean on a refresh does not stop at it,
 * leaving the application's other beans unbound (a refresh with a misspelt name is refused by the starter alone,
 * with an error naming it).
 */
@ConfigurationProperties(prefix = "limiter")
public class RateLimiterProperties {

	/**
	 * Binds {@code limiter.*} from an environment as the configuration properties bean does, refusing names it does not
	 * know: a typo such as {@code limiter.failure.polcy} would otherwise leave the default in force, unnoticed.
	 * @param environment the environment
	 * @return the properties
	 */
	public static RateLimiterProperties bind(org.springframework.core.env.Environment environment) {
		RateLimiterProperties properties = Binder.get(environment)
			.bindOrCreate("limiter", Bindable.of(RateLimiterProperties.class),
					new EmptyValues(new NoUnboundElementsBindHandler(BindHandler.DEFAULT,
							// As Boot's own strict binding: environment variables and system properties are set
							// for the whole machine (LIMITER_REDIS_SERVER, a Kubernetes service named limiter),
							// not only for this starter, so a name there that it does not know is no typo.
							new UnboundElementsSourceFilter())));
		properties.validate();
		return properties;
	}

	/**
	 * Refuses what binding alone lets through: a key prefix that would pick a cluster slot or leave the key space's
	 * top level, and times of the guard and the retuner out of their bounds. Run by {@link #bind} (at startup and on a
	 * refresh, which is then refused) and where the starter reads these settings; the bean itself accepts them, so that
	 * Spring Cloud's rebinding of every configuration properties bean does not stop at it.
	 * @throws IllegalStateException naming the property and the value
	 */
	public void validate() {
		if (this.keyPrefix != null && this.keyPrefix.isBlank()) {
			throw new IllegalStateException("Invalid limiter.key-prefix = '" + this.keyPrefix + "': empty, which would "
					+ "write the limiter's keys at the top of Redis's key space, among the application's own; remove "
					+ "it for the default 'limiter:<spring.application.name>:', or give a prefix");
		}
		if (this.keyPrefix != null && (this.keyPrefix.indexOf('{') >= 0 || this.keyPrefix.indexOf('}') >= 0)) {
			throw new IllegalStateException("Invalid limiter.key-prefix = '" + this.keyPrefix + "': must not contain "
					+ "braces, which would pick the Redis Cluster slot of every key (the limiter picks each key's slot "
					+ "from the key)");
		}
		if (this.failure.expectedInstances != null && this.failure.expectedInstances < 1) {
			throw new IllegalStateException("Invalid limiter.failure.expected-instances = '"
					+ this.failure.expectedInstances + "': must be positive (leave it unset to count the instances)");
		}
		within("limiter.failure.deadline", this.failure.deadline, ONE_MILLI);
		within("limiter.failure.max-deadline", this.failure.maxDeadline, ONE_MILLI);
		if (this.failure.deadline.compareTo(this.failure.maxDeadline) > 0) {
			throw new IllegalStateException("Invalid limiter.failure.deadline = '" + DurationText.of(this.failure.deadline)
					+ "': must not exceed limiter.failure.max-deadline = '" + DurationText.of(this.failure.maxDeadline)
					+ "' (the deadline adapts between the two)");
		}
		within("limiter.failure.open-duration", this.failure.openDuration, ONE_MILLI);
		within("limiter.failure.heartbeat", this.failure.heartbeat, TEN_MILLIS);
		within("limiter.retune.refresh", this.retune.refresh, TEN_MILLIS);
		within("limiter.retune.timeout", this.retune.timeout, ONE_MILLI);
	}

	/**
	 * A time setting within its bounds: at least {@code least} (a deadline is checked every millisecond, and a
	 * heartbeat or a poll every few milliseconds would only load Redis), at most 3660 days, as a limit's durations.
	 */
	private static void within(String property, Duration value, Duration least) {
		if (value == null || value.isNegative() || value.isZero()) {
			throw new IllegalStateException("Invalid " + property + " = '" + DurationText.of(value) + "': must be a positive duration");
		}
		if (value.compareTo(least) < 0) {
			throw new IllegalStateException("Invalid " + property + " = '" + DurationText.of(value) + "': must be at least " + DurationText.of(least)
					+ " (a number without a unit is milliseconds)");
		}
		if (value.compareTo(LONGEST) > 0) {
			throw new IllegalStateException("Invalid " + property + " = '" + DurationText.of(value) + "': must be at most "
					+ LONGEST.toDays() + " days");
		}
	}

	private static final Duration ONE_MILLI = Duration.ofMillis(1);

	private static final Duration TEN_MILLIS = Duration.ofMillis(10);

	private static final Duration LONGEST = Duration.ofDays(3660);

	/**
	 * Refuses a property given an empty value, from any source ({@code limiter.failure.deadline=}, an unset
	 * {@code ${POLICY}} in a compose file's {@code LIMITER_FAILURE_POLICY}), which would otherwise bind to nothing and
	 * leave the default in force unnoticed.
	 */
	private static final class EmptyValues extends AbstractBindHandler {

		EmptyValues(BindHandler parent) {
			super(parent);
		}

		@Override
		public void onFinish(ConfigurationPropertyName name, Bindable<?> target, BindContext context, Object result)
				throws Exception {
			ConfigurationProperty property = context.getConfigurationProperty();
			if (property != null && property.getValue() instanceof CharSequence text && text.toString().isBlank()) {
				Origin origin = property.getOrigin();
				throw new IllegalStateException("Invalid " + property.getName() + " = '" + text + "'"
						+ ((origin != null) ? " (" + origin + ")" : "") + ": empty; give it a value, or remove it for "
						+ "the default");
			}
			super.onFinish(name, target, context, result);
		}

	}

	/**
	 * Whether @RateLimit annotations are enforced.
	 */
	private boolean enabled = true;

	/**
	 * Where limits are kept. By default the first available of: Redisson (a RedissonClient bean), Redis (a
	 * RedisConnectionFactory bean), local (in this JVM only).
	 */
	private BackendType backend = BackendType.AUTO;

	/**
	 * Prefix of every Redis key the limiter writes; must not contain braces. Defaults to
	 * "limiter:<spring.application.name>:" when the application has a name, so that applications sharing one Redis
	 * never share a limit by accident, and to "limiter:" otherwise.
	 */
	private String keyPrefix;

	/**
	 * How a key expression that evaluates to null or an empty string is handled: 'shared' puts all such calls in one
	 * bucket per limit, 'reject' refuses the call. Never "unlimited".
	 */
	private EmptyKey emptyKey = EmptyKey.SHARED;

	/**
	 * Bits of a client's IPv6 address that a limit keyed by '#ip' keeps, 1 to 128: by default 64, the network one host
	 * is given and whose every address it may use (a limit per address would be no limit). IPv4 addresses are kept
	 * whole; conditions and compound keys see the address as the server wrote it.
	 */
	private int ipv6PrefixLength = 64;

	/**
	 * Settings for every limit, used where neither the annotation nor its policy sets them.
	 */
	private final Policy defaults = new Policy();

	/**
	 * Named policies that @RateLimit(policy = "...") refers to, so operators retune limits without recompiling.
	 */
	private final Map<String, Policy> policies = new LinkedHashMap<>();

	/**
	 * Whether every limit runs in shadow mode: decided and counted, never rejecting; but for the limits that count
	 * only failures ({@code recordOn}, {@code recordIf}), which guard against guessing and keep refusing.
	 */
	private boolean shadow;

	private final Failure failure = new Failure();

	private final Aop aop = new Aop();

	private final Headers headers = new Headers();

	private final Local local = new Local();

	private final Redisson redisson = new Redisson();

	private final Redis redis = new Redis();

	private final Retune retune = new Retune();

	public Retune getRetune() {
		return this.retune;
	}

	public boolean isEnabled() {
		return this.enabled;
	}

	public void setEnabled(boolean enabled) {
		this.enabled = enabled;
	}

	public BackendType getBackend() {
		return this.backend;
	}

	public void setBackend(BackendType backend) {
		this.backend = backend;
	}

	public String getKeyPrefix() {
		return this.keyPrefix;
	}

	/**
	 * The prefix in force: {@link #getKeyPrefix()} when set, otherwise one made of the application's name.
	 * @param applicationName {@code spring.application.name}, or {@code null}
	 * @return the prefix
	 */
	public String keyPrefixFor(String applicationName) {
		if (this.keyPrefix != null) {
			return this.keyPrefix;
		}
		return (applicationName == null || applicationName.isBlank()) ? "limiter:"
				: "limiter:" + applicationName.trim().replace("{", "(").replace("}", ")") + ":";
	}

	public void setKeyPrefix(String keyPrefix) {
		this.keyPrefix = keyPrefix;
	}

	public EmptyKey getEmptyKey() {
		return this.emptyKey;
	}

	public int getIpv6PrefixLength() {
		return this.ipv6PrefixLength;
	}

	public void setIpv6PrefixLength(int ipv6PrefixLength) {
		if (ipv6PrefixLength < 1 || ipv6PrefixLength > 128) {
			throw new IllegalArgumentException("Invalid limiter.ipv6-prefix-length = '" + ipv6PrefixLength
					+ "': must be between 1 and 128 (64 keys a client by its host's network, 128 by its address)");
		}
		this.ipv6PrefixLength = ipv6PrefixLength;
	}

	public void setEmptyKey(EmptyKey emptyKey) {
		this.emptyKey = emptyKey;
	}

	public Policy getDefaults() {
		return this.defaults;
	}

	public Map<String, Policy> getPolicies() {
		return this.policies;
	}

	public boolean isShadow() {
		return this.shadow;
	}

	public void setShadow(boolean shadow) {
		this.shadow = shadow;
	}

	public Failure getFailure() {
		return this.failure;
	}

	public Aop getAop() {
		return this.aop;
	}

	public Headers getHeaders() {
		return this.headers;
	}

	public Local getLocal() {
		return this.local;
	}

	public Redisson getRedisson() {
		return this.redisson;
	}

	public Redis getRedis() {
		return this.redis;
	}

	/**
	 * Where limits are kept.
	 */
	public enum BackendType {

		/** The first available of Redisson, Redis and local. */
		AUTO,

		/** In this JVM only: limits hold per instance. */
		LOCAL,

		/** Redis through Spring Data Redis (Lettuce or Jedis): one Lua script call per decision. */
		REDIS,

		/** Redis through Redisson: RRateLimiter for token buckets, the Lua scripts for the rest. */
		REDISSON

	}

	/**
	 * What a key that evaluates to null or empty means.
	 */
	public enum EmptyKey {

		/** One shared bucket per limit for all such calls. */
		SHARED,

		/** The call is refused with an error. */
		REJECT

	}

	/**
	 * Settings of a limit; any left unset come from the defaults.
	 */
	public static class Policy {

		/**
		 * Algorithm: fixed-window, sliding-window-log, sliding-window-counter, token-bucket (the default) or
		 * leaky-bucket.
		 */
		private Algorithm algorithm;

		/**
		 * Permits per window: the limit of a window algorithm, the refill of a token bucket, the rate of a leaky
		 * bucket.
		 */
		private Long max;

		/**
		 * Window length, or refill period of a bucket. A bare number is milliseconds: write the unit ("1m").
		 */
		private Duration window;

		/**
		 * Permits one call takes (1 by default).
		 */
		private Long cost;

		/**
		 * Token bucket only: the most tokens the bucket holds (max by default).
		 */
		private Long capacity;

		/**
		 * Token bucket only: starts the bucket cold after it was idle (and when new), at a third of its rate and burst,
		 * reaching its full rate over this period of steady demand, as Guava's warming RateLimiter. None by default.
		 */
		private Duration warmup;

		/**
		 * Leaky bucket only: requests accepted beyond the rate (0 by default).
		 */
		private Long burst;

		/**
		 * Leaky bucket only: whether the burst is served at once instead of queued.
		 */
		private Boolean nodelay;

		/**
		 * Leaky bucket only: excess requests served at once before the rest are queued, as nginx's delay (two-stage
		 * limiting); between 0 and the burst. Not with nodelay.
		 */
		private Long delay;

		/**
		 * Fixed window only: align windows to calendar periods (day, week or month) instead of the epoch.
		 */
		private CalendarUnit calendar;

		/**
		 * Fixed window with a calendar only: the time zone whose midnight starts a period (the JVM's by default).
		 */
		private ZoneId zone;

		/**
		 * Whether the limit is shared by all instances (shared, the default) or kept per instance (per-instance).
		 */
		private Limit.Scope scope;

		/**
		 * What decides when the backend cannot answer in time: local, open or closed (limiter.failure.policy by
		 * default).
		 */
		private FailurePolicy onFailure;

		/**
		 * Longest time a call may wait for a permit instead of being rejected, including a queueing leaky bucket's
		 * turn (no wait by default; a queued call then waits up to burst turns).
		 */
		private Duration maxWait;

		/**
		 * Whether the limit runs in shadow mode: decided and counted, never rejecting.
		 */
		private Boolean shadow;

		public FailurePolicy getOnFailure() {
			return this.onFailure;
		}

		public void setOnFailure(FailurePolicy onFailure) {
			this.onFailure = onFailure;
		}

		public Duration getMaxWait() {
			return this.maxWait;
		}

		public void setMaxWait(Duration maxWait) {
			this.maxWait = maxWait;
		}

		public Boolean getShadow() {
			return this.shadow;
		}

		public void setShadow(Boolean shadow) {
			this.shadow = shadow;
		}

		public Algorithm getAlgorithm() {
			return this.algorithm;
		}

		public void setAlgorithm(Algorithm algorithm) {
			this.algorithm = algorithm;
		}

		public Long getMax() {
			return this.max;
		}

		public void setMax(Long max) {
			this.max = max;
		}

		public Duration getWindow() {
			return this.window;
		}

		public void setWindow(Duration window) {
			this.window = window;
		}

		public Long getCost() {
			return this.cost;
		}

		public void setCost(Long cost) {
			this.cost = cost;
		}

		public Long getCapacity() {
			return this.capacity;
		}

		public void setCapacity(Long capacity) {
			this.capacity = capacity;
		}

		public Duration getWarmup() {
			return this.warmup;
		}

		public void setWarmup(Duration warmup) {
			this.warmup = warmup;
		}

		public Long getBurst() {
			return this.burst;
		}

		public void setBurst(Long burst) {
			this.burst = burst;
		}

		public Boolean getNodelay() {
			return this.nodelay;
		}

		public void setNodelay(Boolean nodelay) {
			this.nodelay = nodelay;
		}

		public Long getDelay() {
			return this.delay;
		}

		public void setDelay(Long delay) {
			this.delay = delay;
		}

		public CalendarUnit getCalendar() {
			return this.calendar;
		}

		public void setCalendar(CalendarUnit calendar) {
			this.calendar = calendar;
		}

		public ZoneId getZone() {
			return this.zone;
		}

		public void setZone(ZoneId zone) {
			this.zone = zone;
		}

		public Limit.Scope getScope() {
			return this.scope;
		}

		public void setScope(Limit.Scope scope) {
			this.scope = scope;
		}

	}

	/**
	 * Backend outages.
	 */
	public static class Failure {

		/**
		 * What decides when the backend cannot answer: 'local' decides on a per-instance share of each limit (the
		 * limit divided by the number of instances) once a probe confirmed the outage, and rejects a call that only
		 * missed its deadline; 'open' admits; 'closed' rejects.
		 */
		private FailurePolicy policy = FailurePolicy.LOCAL;

		/**
		 * Shortest time a decision waits for the backend before the failure policy decides. The deadline in force is
		 * three times the slowest answer of the last 10 seconds, between this and max-deadline, so that a busy JVM is
		 * not taken for a dead backend. At least 1 ms; a bare number is milliseconds.
		 */
		private Duration deadline = Duration.ofMillis(50);

		/**
		 * Longest time a decision waits for the backend, and how long a probe waits for its answer. The backend
		 * counts as down, and the circuit opens, when two probes in a row get none and nothing else answered. At least
		 * 1 ms.
		 */
		private Duration maxDeadline = Duration.ofSeconds(1);

		/**
		 * Number of application instances sharing the limits, which divides them for the 'local' policy during an
		 * outage. When unset, the instances count themselves through a heartbeat key in the backend.
		 */
		private Integer expectedInstances;

		/**
		 * Interval of the heartbeat that probes the backend and announces this instance (alive for three intervals).
		 * At least 10 ms; a bare number is milliseconds.
		 */
		private Duration heartbeat = Duration.ofSeconds(1);

		/**
		 * No longer used: a probe that gets no answer within max-deadline opens the circuit.
		 */
		private Integer failureThreshold;

		/**
		 * How long the circuit stays open before the next probe of the backend. At least 1 ms.
		 */
		private Duration openDuration = Duration.ofSeconds(5);

		public FailurePolicy getPolicy() {
			return this.policy;
		}

		public void setPolicy(FailurePolicy policy) {
			this.policy = policy;
		}

		public Duration getDeadline() {
			return this.deadline;
		}

		public void setDeadline(Duration deadline) {
			this.deadline = deadline;
		}

		public Duration getMaxDeadline() {
			return this.maxDeadline;
		}

		public void setMaxDeadline(Duration maxDeadline) {
			this.maxDeadline = maxDeadline;
		}

		public Integer getExpectedInstances() {
			return this.expectedInstances;
		}

		public void setExpectedInstances(Integer expectedInstances) {
			this.expectedInstances = expectedInstances;
		}

		public Duration getHeartbeat() {
			return this.heartbeat;
		}

		public void setHeartbeat(Duration heartbeat) {
			this.heartbeat = heartbeat;
		}

		@DeprecatedConfigurationProperty(reason = "A probe that gets no answer within max-deadline opens the circuit",
				since = "0.1.0")
		@Deprecated(since = "0.1.0")
		public Integer getFailureThreshold() {
			return this.failureThreshold;
		}

		@Deprecated(since = "0.1.0")
		public void setFailureThreshold(Integer failureThreshold) {
			this.failureThreshold = failureThreshold;
		}

		public Duration getOpenDuration() {
			return this.openDuration;
		}

		public void setOpenDuration(Duration openDuration) {
			this.openDuration = openDuration;
		}

	}

	/**
	 * Proxying.
	 */
	public static class Aop {

		/**
		 * Order of the rate limiting advice. The default runs it before @Transactional (whose order is the lowest
		 * precedence), so a rejected call never opens a transaction.
		 */
		private int order = Ordered.LOWEST_PRECEDENCE - 100;

		public int getOrder() {
			return this.order;
		}

		public void setOrder(int order) {
			this.order = order;
		}

	}

	/**
	 * HTTP response headers.
	 */
	public static class Headers {

		/**
		 * Whether responses of limited web handlers that are admitted carry the RateLimit and RateLimit-Policy header
		 * fields (rejected ones always do).
		 */
		private boolean enabled = true;

		public boolean isEnabled() {
			return this.enabled;
		}

		public void setEnabled(boolean enabled) {
			this.enabled = enabled;
		}

	}

	/**
	 * The local backend.
	 */
	public static class Local {

		/**
		 * Most keys kept in memory; beyond, a new key takes the place of a less used one (W-TinyLFU), so a flood of
		 * one-off keys cannot push out the keys in real use.
		 */
		private int maxKeys = 100_000;

		/**
		 * The clock of local decisions: precise (the system clock, read for every decision) or ticking (a reading a
		 * daemon thread refreshes every millisecond while decisions read it). On the ticking clock, token and leaky
		 * buckets admit a call on that reading, about 30 ns faster; a call admitted so counts from up to a millisecond
		 * earlier (longer when that thread runs late), so right after a key was used a burst can take up to the
		 * limit's rate times that lag more. Refused and delayed calls (about 13 ns slower), windows and sliding logs
		 * are decided on the system clock either way.
		 */
		private Clock clock = Clock.PRECISE;

		public Clock getClock() {
			return this.clock;
		}

		public void setClock(Clock clock) {
			this.clock = clock;
		}

		public int getMaxKeys() {
			return this.maxKeys;
		}

		public void setMaxKeys(int maxKeys) {
			if (maxKeys < 1) {
				throw new IllegalArgumentException("Invalid limiter.local.max-keys = '" + maxKeys + "': must be positive");
			}
			this.maxKeys = maxKeys;
		}

		/** The clock of local decisions. */
		public enum Clock {

			/** The system clock, read for every decision. */
			PRECISE(TimeSource.SYSTEM),

			/** The system clock's reading refreshed every millisecond, for token and leaky buckets admitting at once. */
			TICKING(TimeSource.ticking());

			private final TimeSource source;

			Clock(TimeSource source) {
				this.source = source;
			}

			/**
			 * The time source of this choice.
			 * @return the time source
			 */
			public TimeSource source() {
				return this.source;
			}

		}

	}

	/**
	 * The Redisson backend.
	 */
	public static class Redisson {

		/**
		 * How token buckets are enforced: script (the default: the exact GCRA script of the other algorithms, one
		 * call per decision) or rate-limiter (Redisson's RRateLimiter, for limiters shared with other Redisson code;
		 * it reads each instance's clock, not Redis's, so instances' clocks must agree).
		 */
		private RedissonBackend.TokenBucketMode tokenBucketMode = RedissonBackend.TokenBucketMode.SCRIPT;

		public RedissonBackend.TokenBucketMode getTokenBucketMode() {
			return this.tokenBucketMode;
		}

		public void setTokenBucketMode(RedissonBackend.TokenBucketMode tokenBucketMode) {
			this.tokenBucketMode = tokenBucketMode;
		}

	}

	/**
	 * The Redis backends (Spring Data Redis and Redisson): the short roads of single-limit decisions.
	 */
	public static class Redis {

		/**
		 * Whether decisions in flight at once in this JVM on one connection (one cluster slot), on any keys, are
		 * decided together by one script call (each still exactly, in arrival order).
		 */
		private boolean coalesce = true;

		/**
		 * Most keys whose last rejection is remembered (for up to a second, never past its retry time), so that
		 * calls Redis would reject anyway are answered without it; 0 switches the cache off.
		 */
		private int denialCacheSize = 100_000;

		public boolean isCoalesce() {
			return this.coalesce;
		}

		public void setCoalesce(boolean coalesce) {
			this.coalesce = coalesce;
		}

		public int getDenialCacheSize() {
			return this.denialCacheSize;
		}

		public void setDenialCacheSize(int denialCacheSize) {
			if (denialCacheSize < 0) {
				throw new IllegalArgumentException("Invalid limiter.redis.denial-cache-size = '" + denialCacheSize
						+ "': must be 0 (off) or a number of keys");
			}
			this.denialCacheSize = denialCacheSize;
		}

	}

	/**
	 * Retuning limits at runtime: overrides through POST /actuator/ratelimiters/{name}, kept in the shared backend.
	 */
	public static class Retune {

		/**
		 * How often each instance reads the runtime overrides from the shared backend: the longest time an override
		 * made on another instance takes to apply here. At least 10 ms; a bare number is milliseconds.
		 */
		private Duration refresh = Duration.ofSeconds(5);

		/**
		 * How long a read or write of the runtime overrides in the backend may take. At least 1 ms.
		 */
		private Duration timeout = Duration.ofSeconds(2);

		public Duration getRefresh() {
			return this.refresh;
		}

		public void setRefresh(Duration refresh) {
			this.refresh = refresh;
		}

		public Duration getTimeout() {
			return this.timeout;
		}

		public void setTimeout(Duration timeout) {
			this.timeout = timeout;
		}

	}

}
