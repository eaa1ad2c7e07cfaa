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
import io.github.limiter.guard.GuardedBackend;
import io.github.limiter.spi.RateLimiterBackend;

/**
 * The health of the rate limiter's backend: {@code UP} when it answers a check (which consumes and writes nothing)
 * within the timeout, {@code DOWN} with the failure otherwise.
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
	 * Checks the backend.
	 * @return {@code null} when it answered, the failure otherwise; details are added to the map
	 */
	Throwable check(Map<String, Object> details) {
		details.put("backend", this.backendName);
		RateLimiterBackend probed = this.backend;
		if (this.backend instanceof GuardedBackend guarded) {
			// Probe the backend itself: the guard would answer for it.
			probed = guarded.delegate();
			GuardedBackend.Stats stats = guarded.stats();
			details.put("circuit", stats.breaker().name());
			details.put("failures", stats.failures());
			details.put("degradedDecisions", stats.degradedDecisions());
			if (stats.lastFailure() != null) {
				details.put("lastFailure", stats.lastFailure().message());
			}
		}
		long start = System.nanoTime();
		try {
			probed.decideAsync(List.of(LimitRequest.of(PROBE, "probe")), Operation.CHECK)
				.toCompletableFuture()
				.get(this.timeout.toMillis(), TimeUnit.MILLISECONDS);
			details.put("latencyMillis", TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start));
			return null;
		}
		catch (TimeoutException ex) {
			return new TimeoutException("no answer within " + this.timeout.toMillis() + " ms");
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			return ex;
		}
		catch (Exception ex) {
			return (ex.getCause() != null) ? ex.getCause() : ex;
		}
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
		Throwable failure = check(details);
		Object builder = (failure != null) ? health.getMethod("down", Throwable.class).invoke(null, failure)
				: health.getMethod("up").invoke(null);
		Method withDetails = builder.getClass().getMethod("withDetails", Map.class);
		builder = withDetails.invoke(builder, details);
		return builder.getClass().getMethod("build").invoke(builder);
	}

}
