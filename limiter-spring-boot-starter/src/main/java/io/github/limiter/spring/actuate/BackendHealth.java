package io.github.limiter.spring.actuate;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import io.github.limiter.LimitRequest;
import io.github.limiter.Operation;
import io.github.limiter.algorithm.FixedWindow;
import io.github.limiter.backend.local.LocalBackend;
import io.github.limiter.guard.CircuitBreaker;
import io.github.limiter.guard.GuardedBackend;
import io.github.limiter.spi.RateLimiterBackend;

/**
 * The health of the rate limiter's backend: {@code UP} while decisions go to it, {@code DEGRADED} while its circuit is
 * open and the failure policy decides, with the guard's details (circuit, deadline, instances, last probe, last
 * failure) either way.
 *
 * <p>{@code DEGRADED} is a status of its own, which Spring Boot's default aggregation leaves out: the application stays
 * {@code UP} and in its load balancer while the limiter degrades, since it keeps serving. An operator who wants it
 * otherwise lists it in {@code management.endpoint.health.status.order} and maps it in
 * {@code management.endpoint.health.status.http-mapping}. The check never calls a guarded backend: it reads the state
 * the heartbeat keeps, so it answers at once.
 *
 * <p>Spring Boot 3.5 and 4.x declare {@code HealthIndicator} and {@code Health} in different packages; this class
 * implements whichever the application runs on, through a dynamic proxy, so that one jar serves both lines. Reflection
 * is used only when the health endpoint is read.
 */
public final class BackendHealth {

	/** {@code HealthIndicator} of Spring Boot 4.x. */
	public static final String BOOT_4_PACKAGE = "org.springframework.boot.health.contributor";

	/** {@code HealthIndicator} of Spring Boot 3.x. */
	public static final String BOOT_3_PACKAGE = "org.springframework.boot.actuate.health";

	/** Decisions go to the backend. */
	public static final String UP = "UP";

	/** The backend is down; the failure policy decides. Not aggregated into the application's status by default. */
	public static final String DEGRADED = "DEGRADED";

	/** A backend without a guard did not answer. */
	public static final String DOWN = "DOWN";

	private static final FixedWindow PROBE = FixedWindow.of("health-probe", 1, Duration.ofSeconds(1));

	private final RateLimiterBackend backend;

	private final String backendName;

	private final Duration timeout;

	/**
	 * Creates a health check.
	 * @param backend the backend
	 * @param backendName its name, reported as a detail
	 * @param timeout how long the backend may take to answer
	 */
	public BackendHealth(RateLimiterBackend backend, String backendName, Duration timeout) {
		this.backend = backend;
		this.backendName = backendName;
		this.timeout = timeout;
	}

	/**
	 * Checks the backend. A guarded backend is judged by its guard's state, without calling it: the heartbeat probes
	 * it every second, and a health check must answer at once whatever the backend does.
	 * @param details filled with what the check found
	 * @return {@link #UP}, {@link #DEGRADED} or {@link #DOWN}
	 */
	String check(Map<String, Object> details) {
		details.put("backend", this.backendName);
		if (this.backend instanceof LocalBackend) {
			return UP;
		}
		if (this.backend instanceof GuardedBackend guarded) {
			GuardedBackend.Stats stats = guarded.stats();
			details.put("circuit", stats.breaker().name());
			details.put("deadlineMillis", stats.deadline().toMillis());
			details.put("instances", stats.instances());
			details.put("instancesCounted", stats.instancesKnown());
			details.put("failures", stats.failures());
			details.put("degradedDecisions", stats.degradedDecisions());
			if (stats.lastProbe() != null) {
				details.put("lastProbe", stats.lastProbe().at().toString());
				if (stats.lastProbe().latency() != null) {
					details.put("lastProbeMillis", stats.lastProbe().latency().toMillis());
				}
			}
			if (stats.lastFailure() != null) {
				details.put("lastFailure", stats.lastFailure().message());
				details.put("lastFailureAt", stats.lastFailure().at().toString());
			}
			return (stats.breaker() == CircuitBreaker.State.CLOSED) ? UP : DEGRADED;
		}
		long start = System.nanoTime();
		try {
			this.backend.decideAsync(List.of(LimitRequest.of(PROBE, "probe")), Operation.CHECK)
				.toCompletableFuture()
				.get(this.timeout.toMillis(), TimeUnit.MILLISECONDS);
			details.put("latencyMillis", TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start));
			return UP;
		}
		catch (TimeoutException ex) {
			details.put("error", "no answer within " + this.timeout.toMillis() + " ms");
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			details.put("error", "interrupted");
		}
		catch (Exception ex) {
			Throwable cause = (ex.getCause() != null) ? ex.getCause() : ex;
			details.put("error", cause.getClass().getName() + ": " + cause.getMessage());
		}
		return DOWN;
	}

	/**
	 * A {@code HealthIndicator} of the given package (Boot 3.x or 4.x) backed by this check.
	 * @param healthPackage {@link #BOOT_3_PACKAGE} or {@link #BOOT_4_PACKAGE}
	 * @param classLoader the class loader of the application
	 * @return the indicator
	 * @throws ClassNotFoundException when that Boot line is not present
	 */
	public Object asHealthIndicator(String healthPackage, ClassLoader classLoader) throws ClassNotFoundException {
		Class<?> indicator = Class.forName(healthPackage + ".HealthIndicator", false, classLoader);
		Class<?> health = Class.forName(healthPackage + ".Health", false, classLoader);
		InvocationHandler handler = (proxy, method, args) -> {
			if (method.getName().equals("health") && method.getParameterCount() == 0) {
				return health(health);
			}
			if (method.isDefault()) {
				return InvocationHandler.invokeDefault(proxy, method, args);
			}
			return switch (method.getName()) {
				case "toString" -> "BackendHealth[" + this.backendName + "]";
				case "hashCode" -> System.identityHashCode(proxy);
				case "equals" -> proxy == args[0];
				default -> throw new UnsupportedOperationException(method.toString());
			};
		};
		return Proxy.newProxyInstance(classLoader, new Class<?>[] { indicator }, handler);
	}

	private Object health(Class<?> health) throws ReflectiveOperationException {
		Map<String, Object> details = new LinkedHashMap<>();
		String status = check(details);
		Object builder = health.getMethod("status", String.class).invoke(null, status);
		Method withDetails = builder.getClass().getMethod("withDetails", Map.class);
		builder = withDetails.invoke(builder, details);
		return builder.getClass().getMethod("build").invoke(builder);
	}

}
