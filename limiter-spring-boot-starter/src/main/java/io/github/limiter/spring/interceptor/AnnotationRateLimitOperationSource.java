package io.github.limiter.spring.interceptor;

import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
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

import io.github.limiter.guard.FailurePolicy;
import io.github.limiter.spring.annotation.RateLimit;
import io.github.limiter.spring.annotation.RateLimits;
import io.github.limiter.spring.autoconfigure.RateLimiterProperties;

/**
 * Finds {@link RateLimit} on methods and classes, parses each method once and caches the result per (method, target
 * class), including "not limited", so that an unlimited method costs one map lookup.
 */
public class AnnotationRateLimitOperationSource implements RateLimitOperationSource {

	private static final Object NOT_LIMITED = new Object();

	private final RateLimitAnnotationParser parser;

	private final Map<MethodClassKey, Object> cache = new ConcurrentHashMap<>(256);

	/**
	 * The last target class seen for each method, and what it resolved to: most methods have one target class, so
	 * a call finds its method by identity here, without building a key or comparing parameter types.
	 */
	private final Map<Method, Resolved> recent = new ConcurrentHashMap<>(256);

	private final Map<Class<?>, Boolean> checkedClasses = new ConcurrentHashMap<>(64);

	private final Map<String, RateLimitedMethod> limitOwners = new ConcurrentHashMap<>();

	private final Map<String, FailurePolicy> failurePolicies = new ConcurrentHashMap<>();

	/**
	 * Creates a source.
	 * @param properties the limiter properties (policies and defaults)
	 * @param placeholders resolves {@code ${...}} in annotation attributes
	 */
	public AnnotationRateLimitOperationSource(RateLimiterProperties properties, StringValueResolver placeholders) {
		validate(properties);
		this.parser = new RateLimitAnnotationParser(properties, placeholders);
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
		Resolved recent = this.recent.get(method);
		if (recent != null && recent.targetClass == targetClass) {
			return recent.limited;
		}
		MethodClassKey key = new MethodClassKey(method, targetClass);
		Object cached = this.cache.get(key);
		if (cached == null) {
			RateLimitedMethod parsed = parse(method, targetClass);
			cached = this.cache.computeIfAbsent(key, k -> (parsed != null) ? register(parsed) : NOT_LIMITED);
		}
		RateLimitedMethod limited = (cached != NOT_LIMITED) ? (RateLimitedMethod) cached : null;
		this.recent.put(method, new Resolved(targetClass, limited));
		return limited;
	}

	private record Resolved(Class<?> targetClass, RateLimitedMethod limited) {

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

	private RateLimitedMethod parse(Method method, Class<?> targetClass) {
		Class<?> userClass = (targetClass != null) ? ClassUtils.getUserClass(targetClass) : method.getDeclaringClass();
		Method specific = AopUtils.getMostSpecificMethod(method, userClass);
		List<RateLimit> annotations = new ArrayList<>(
				AnnotatedElementUtils.findMergedRepeatableAnnotations(specific, RateLimit.class, RateLimits.class));
		if (annotations.isEmpty() && specific != method) {
			annotations.addAll(AnnotatedElementUtils.findMergedRepeatableAnnotations(method, RateLimit.class, RateLimits.class));
		}
		List<RateLimit> typeAnnotations = Modifier.isPublic(specific.getModifiers()) ? new ArrayList<>(
				AnnotatedElementUtils.findMergedRepeatableAnnotations(userClass, RateLimit.class, RateLimits.class))
				: List.of();
		if (annotations.isEmpty() && typeAnnotations.isEmpty()) {
			return null;
		}
		return this.parser.parse(specific, userClass, annotations, typeAnnotations);
	}

	/** Two methods may share a limit by naming it, but then they must define it the same way. */
	private RateLimitedMethod register(RateLimitedMethod method) {
		for (RateLimitOperation operation : method.operations()) {
			this.failurePolicies.put(operation.limit().name(), operation.failurePolicy());
			RateLimitedMethod owner = this.limitOwners.putIfAbsent(operation.limit().name(), method);
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

	@Override
	public FailurePolicy failurePolicy(String limitName) {
		return this.failurePolicies.get(limitName);
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
		if (policy.getMaxWait() != null && policy.getMaxWait().isNegative()) {
			throw new IllegalStateException("Invalid " + prefix + ".max-wait = '" + policy.getMaxWait() + "': must not be negative");
		}
		Duration window = policy.getWindow();
		if (window != null && (window.isNegative() || window.isZero())) {
			throw new IllegalStateException("Invalid " + prefix + ".window = '" + window + "': must be a positive duration");
		}
		if (policy.getWarmup() != null && policy.getWarmup().isNegative()) {
			throw new IllegalStateException("Invalid " + prefix + ".warmup = '" + policy.getWarmup()
					+ "': must be a positive duration, or 0 for none");
		}
	}

	private static void positive(String property, Long value) {
		if (value != null && value <= 0) {
			throw new IllegalStateException("Invalid " + property + " = '" + value + "': must be positive");
		}
	}

}
