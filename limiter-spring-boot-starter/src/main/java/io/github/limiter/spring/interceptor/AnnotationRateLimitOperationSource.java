package io.github.limiter.spring.interceptor;

import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;

import org.springframework.aop.support.AopUtils;
import org.springframework.core.MethodClassKey;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.core.annotation.AnnotationUtils;
import org.springframework.util.ClassUtils;
import org.springframework.util.StringValueResolver;

import io.github.limiter.DurationText;
import io.github.limiter.guard.FailurePolicy;
import io.github.limiter.spring.annotation.RateLimit;
import io.github.limiter.spring.annotation.RateLimits;
import io.github.limiter.spring.autoconfigure.RateLimiterProperties;

/**
 * Finds {@link RateLimit} on methods and classes, parses each method once and caches the result per (method, target
 * class), including "not limited", so that an unlimited method costs one map lookup.
 *
 * <p>Retuning parses every limited method again with new settings ({@link #retuning}, which checks them as startup
 * does and changes nothing) and then swaps the results in at once ({@link #apply}): calls under way finish with the
 * limits they started with, later calls see the new ones.
 */
public class AnnotationRateLimitOperationSource implements RateLimitOperationSource,
		org.springframework.beans.factory.BeanFactoryAware {

	private static final Object NOT_LIMITED = new Object();

	private final StringValueResolver placeholders;

	/** Whether the application defines a bean, for the {@code @bean} references of expressions; any, until known. */
	private volatile java.util.function.Predicate<String> beans = name -> true;

	private volatile RateLimitAnnotationParser parser;

	private final Map<MethodClassKey, Object> cache = new ConcurrentHashMap<>(256);

	/**
	 * The last target class seen for each method, and what it resolved to: most methods have one target class, so
	 * a call finds its method by identity here, without building a key or comparing parameter types.
	 */
	private final Map<Method, Resolved> recent = new ConcurrentHashMap<>(256);

	private final Map<Class<?>, Boolean> checkedClasses = new ConcurrentHashMap<>(64);

	private volatile Owners owners = new Owners();

	/** Moves on every retuning applied: what {@link #recent} remembers from before is not used after. */
	private volatile int generation;

	/**
	 * Creates a source.
	 * @param properties the limiter properties (policies and defaults)
	 * @param placeholders resolves {@code ${...}} in annotation attributes
	 */
	public AnnotationRateLimitOperationSource(RateLimiterProperties properties, StringValueResolver placeholders) {
		validate(properties);
		this.placeholders = placeholders;
		this.parser = new RateLimitAnnotationParser(properties, placeholders, Map.of(), this::definesBean);
	}

	@Override
	public void setBeanFactory(org.springframework.beans.factory.BeanFactory beanFactory) {
		this.beans = beanFactory::containsBean;
	}

	private boolean definesBean(String name) {
		return this.beans.test(name);
	}

	@Override
	public boolean isCandidateClass(Class<?> targetClass) {
		if (!AnnotationUtils.isCandidateClass(targetClass, RateLimit.class)) {
			return false;
		}
		this.checkedClasses.computeIfAbsent(targetClass, type -> {
			RateLimitAnnotationParser.checkInterceptable(type);
			return Boolean.TRUE;
		});
		return true;
	}

	@Override
	public RateLimitedMethod getRateLimitedMethod(Method method, Class<?> targetClass) {
		if (method.getDeclaringClass() == Object.class) {
			return null;
		}
		int generation = this.generation;
		Resolved recent = this.recent.get(method);
		if (recent != null && recent.targetClass == targetClass && recent.generation == generation) {
			return recent.limited;
		}
		MethodClassKey key = new MethodClassKey(method, targetClass);
		Object cached = this.cache.get(key);
		if (cached == null) {
			// Once per method and class (all of them at startup), under the lock that applies a retuning.
			synchronized (this) {
				cached = this.cache.get(key);
				if (cached == null) {
					RateLimitedMethod parsed = parse(this.parser, method, targetClass);
					cached = (parsed != null) ? this.owners.register(parsed) : NOT_LIMITED;
					this.cache.put(key, cached);
				}
			}
		}
		RateLimitedMethod limited = (cached != NOT_LIMITED) ? (RateLimitedMethod) cached : null;
		// Remembered for the generation it was read in: one read before a retuning is never taken for a later one.
		this.recent.put(method, new Resolved(targetClass, limited, generation));
		return limited;
	}

	private record Resolved(Class<?> targetClass, RateLimitedMethod limited, int generation) {

	}

	@Override
	public Collection<RateLimitedMethod> rateLimitedMethods() {
		List<RateLimitedMethod> methods = new ArrayList<>();
		for (Object value : this.cache.values()) {
			if (value instanceof RateLimitedMethod method) {
				methods.add(method);
			}
		}
		return methods;
	}

	/**
	 * Parses every limited method found so far again, with other properties and runtime overrides, and checks the
	 * result as startup does. Changes nothing: {@link #apply} does.
	 * @param properties the limiter properties (policies and defaults)
	 * @param overrides settings overridden at runtime, by limit name then setting name
	 * @return the parsed methods, to apply
	 * @throws IllegalStateException when a setting is invalid, naming the method, the setting and the value
	 * @throws IllegalArgumentException when an override names a setting that cannot change at runtime
	 */
	public synchronized Retuning retuning(RateLimiterProperties properties, Map<String, Map<String, String>> overrides) {
		overrides.forEach((limit, settings) -> settings.forEach((name, value) -> {
			if (!RateLimitSettings.TUNABLE.contains(name)) {
				throw new IllegalArgumentException("Runtime override '" + name + "' of limit '" + limit + "' is not a "
						+ "setting that can change at runtime (one of " + RateLimitSettings.TUNABLE + ")");
			}
			if (value == null || value.isBlank()) {
				throw new IllegalArgumentException("Runtime override '" + name + "' of limit '" + limit + "' is empty: "
						+ "give it a value, or leave it out (removing every override of the limit gives it back its own)");
			}
		}));
		validate(properties);
		RateLimitAnnotationParser parser = new RateLimitAnnotationParser(properties, this.placeholders, Map.copyOf(overrides),
				this::definesBean);
		Owners owners = new Owners();
		return new Retuning(this, parser, owners, parseMissing(parser, owners, new LinkedHashMap<>()));
	}

	/** Parses, with a retuning's parser, every limited method found so far that {@code methods} does not hold yet. */
	private Map<MethodClassKey, RateLimitedMethod> parseMissing(RateLimitAnnotationParser parser, Owners owners,
			Map<MethodClassKey, RateLimitedMethod> methods) {
		this.cache.forEach((key, cached) -> {
			if (cached instanceof RateLimitedMethod method && !methods.containsKey(key)) {
				methods.put(key, owners.register(parse(parser, method.method(), method.targetClass())));
			}
		});
		return methods;
	}

	/**
	 * The operations of some methods, one per limit name (methods that share a limit define it alike).
	 * @param methods limited methods
	 * @return the first operation of each limit, by limit name, in order
	 */
	public static Map<String, RateLimitOperation> byLimit(Collection<RateLimitedMethod> methods) {
		Map<String, RateLimitOperation> operations = new LinkedHashMap<>();
		for (RateLimitedMethod method : methods) {
			for (RateLimitOperation operation : method.operations()) {
				operations.putIfAbsent(operation.limit().name(), operation);
			}
		}
		return operations;
	}

	/**
	 * The settings a runtime override may change.
	 * @return their names, as the properties of a policy
	 */
	public static List<String> tunableSettings() {
		return RateLimitSettings.TUNABLE;
	}

	/**
	 * Swaps in the methods of a retuning.
	 * @param retuning what {@link #retuning} made
	 * @throws IllegalStateException when the retuning was made by another source
	 */
	public synchronized void apply(Retuning retuning) {
		if (retuning.source != this) {
			throw new IllegalStateException("a retuning applies to the source that made it");
		}
		// Methods first seen since the retuning was made are parsed with its settings too.
		Map<MethodClassKey, RateLimitedMethod> methods = parseMissing(retuning.parser, retuning.owners,
				new LinkedHashMap<>(retuning.methods));
		this.parser = retuning.parser;
		this.owners = retuning.owners;
		this.cache.putAll(methods);
		this.generation++;
		this.recent.clear();
	}

	/**
	 * Every limited method parsed with new settings, checked and ready to {@link #apply}.
	 */
	public static final class Retuning {

		private final AnnotationRateLimitOperationSource source;

		private final RateLimitAnnotationParser parser;

		private final Owners owners;

		private final Map<MethodClassKey, RateLimitedMethod> methods;

		private Retuning(AnnotationRateLimitOperationSource source, RateLimitAnnotationParser parser, Owners owners,
				Map<MethodClassKey, RateLimitedMethod> methods) {
			this.source = source;
			this.parser = parser;
			this.owners = owners;
			this.methods = methods;
		}

		/**
		 * The operations, by limit name, as the retuning makes them.
		 * @return one operation per limit
		 */
		public Map<String, RateLimitOperation> operations() {
			return byLimit(this.methods.values());
		}

	}

	private RateLimitedMethod parse(RateLimitAnnotationParser parser, Method method, Class<?> targetClass) {
		Class<?> userClass = (targetClass != null) ? ClassUtils.getUserClass(targetClass) : method.getDeclaringClass();
		Method specific = RateLimitAnnotationParser.parsedMethod(method, AopUtils.getMostSpecificMethod(method, userClass),
				userClass);
		List<RateLimit> annotations = new ArrayList<>(
				AnnotatedElementUtils.findMergedRepeatableAnnotations(specific, RateLimit.class, RateLimits.class));
		if (annotations.isEmpty() && specific != method) {
			annotations.addAll(AnnotatedElementUtils.findMergedRepeatableAnnotations(method, RateLimit.class, RateLimits.class));
		}
		List<RateLimit> typeAnnotations = RateLimitAnnotationParser.coveredByClassLimit(specific) ? new ArrayList<>(
				AnnotatedElementUtils.findMergedRepeatableAnnotations(userClass, RateLimit.class, RateLimits.class))
				: List.of();
		if (annotations.isEmpty() && typeAnnotations.isEmpty()) {
			return null;
		}
		return parser.parse(specific, userClass, annotations, typeAnnotations);
	}

	/** The method that first declared each limit, and each limit's failure policy. */
	private static final class Owners {

		private final Map<String, RateLimitedMethod> limitOwners = new ConcurrentHashMap<>();

		private final Map<String, FailurePolicy> failurePolicies = new ConcurrentHashMap<>();

		/** Two methods may share a limit by naming it, but then they must define it the same way. */
		private RateLimitedMethod register(RateLimitedMethod method) {
			for (RateLimitOperation operation : method.operations()) {
				this.failurePolicies.put(operation.limit().name(), operation.failurePolicy());
				RateLimitedMethod owner = this.limitOwners.putIfAbsent(operation.limit().name(), method);
				if (owner != null && owner != method && !owner.userClass().equals(method.userClass())
						&& (method.hasDefaultName(operation.limit().name()) || owner.hasDefaultName(operation.limit().name()))) {
					throw new IllegalStateException("Invalid @RateLimit on " + method.qualifiedName()
							+ ": its limit has no name, and its default name '" + operation.limit().name()
							+ "' is also the name of a limit on " + owner.qualifiedName() + " (classes of the same simple name);"
							+ " set attribute 'name' on one of them to keep them apart, or the same name on both to share"
							+ " one limit");
				}
				if (owner != null && owner != method) {
					RateLimitOperation other = owner.operations()
						.stream()
						.filter(candidate -> candidate.limit().name().equals(operation.limit().name()))
						.findFirst()
						.orElseThrow();
					if (!Objects.equals(other.limit().toString(), operation.limit().toString())
							|| other.limit().scope() != operation.limit().scope()
							|| other.failurePolicy() != operation.failurePolicy() || other.shadow() != operation.shadow()) {
						throw new IllegalStateException("Invalid @RateLimit on " + method.description() + ": limit '"
								+ operation.limit().name() + "' is " + operation.limit() + " (on failure " + operation.failurePolicy()
								+ ", shadow " + operation.shadow() + ") here but " + other.limit() + " (on failure "
								+ other.failurePolicy() + ", shadow " + other.shadow() + ") on " + owner.description()
								+ "; methods that share a limit by name must define it the same way");
					}
				}
			}
			return method;
		}

	}

	@Override
	public FailurePolicy failurePolicy(String limitName) {
		return this.owners.failurePolicies.get(limitName);
	}

	private static void validate(RateLimiterProperties properties) {
		validate("limiter.defaults", properties.getDefaults());
		properties.getPolicies().forEach((name, policy) -> validate("limiter.policies." + name, policy));
	}

	private static void validate(String prefix, RateLimiterProperties.Policy policy) {
		positive(prefix + ".max", policy.getMax());
		positive(prefix + ".cost", policy.getCost());
		positive(prefix + ".capacity", policy.getCapacity());
		if (policy.getBurst() != null && policy.getBurst() < 0) {
			throw new IllegalStateException("Invalid " + prefix + ".burst = '" + policy.getBurst() + "': must not be negative");
		}
		if (policy.getDelay() != null && policy.getDelay() < 0) {
			throw new IllegalStateException("Invalid " + prefix + ".delay = '" + policy.getDelay() + "': must not be negative");
		}
		if (policy.getMaxWait() != null && policy.getMaxWait().isNegative()) {
			throw new IllegalStateException("Invalid " + prefix + ".max-wait = '" + DurationText.of(policy.getMaxWait()) + "': must not be negative");
		}
		if (policy.getMaxWait() != null && policy.getMaxWait().compareTo(io.github.limiter.RateLimiter.MAX_WAIT) > 0) {
			throw new IllegalStateException("Invalid " + prefix + ".max-wait = '" + DurationText.of(policy.getMaxWait()) + "': must be at most "
					+ io.github.limiter.RateLimiter.MAX_WAIT.toDays() + " days");
		}
		Duration window = policy.getWindow();
		if (window != null && (window.isNegative() || window.isZero())) {
			throw new IllegalStateException("Invalid " + prefix + ".window = '" + DurationText.of(window) + "': must be a positive duration");
		}
		if (policy.getWarmup() != null && policy.getWarmup().isNegative()) {
			throw new IllegalStateException("Invalid " + prefix + ".warmup = '" + DurationText.of(policy.getWarmup())
					+ "': must be a positive duration, or 0 for none");
		}
	}

	private static void positive(String property, Long value) {
		if (value != null && value <= 0) {
			throw new IllegalStateException("Invalid " + property + " = '" + value + "': must be positive");
		}
	}

}
