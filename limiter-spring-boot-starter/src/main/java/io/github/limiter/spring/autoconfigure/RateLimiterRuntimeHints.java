package io.github.limiter.spring.autoconfigure;

import java.util.List;
import java.util.Map;

import org.springframework.aot.hint.ExecutableMode;
import org.springframework.aot.hint.MemberCategory;
import org.springframework.aot.hint.RuntimeHints;
import org.springframework.aot.hint.RuntimeHintsRegistrar;
import org.springframework.aot.hint.TypeReference;
import org.springframework.util.ClassUtils;

import io.github.limiter.spring.actuate.BackendHealth;
import io.github.limiter.spring.annotation.RateLimit;
import io.github.limiter.spring.interceptor.RateLimitExpressionRootObject;

/**
 * What the starter and the core reach at runtime by name, for a GraalVM native image, which keeps only what it can see
 * at build time or is told about:
 *
 * <ul>
 * <li>the Lua scripts of the Redis backends, read from the classpath ({@code LimiterScript});</li>
 * <li>the root object of key and condition expressions, whose accessors SpEL calls by reflection, and the
 * {@code @RateLimit} attributes, read by name when a limit's settings are resolved;</li>
 * <li>the health indicator, a JDK proxy of the {@code HealthIndicator} of whichever Spring Boot line is present (so one
 * jar serves 3.5 and 4.x, see {@link BackendHealth}), whose handler builds its {@code Health} by reflection;</li>
 * <li>what the Spring Data Redis executor looks up by name: the connection factories' cluster flag and Lettuce's
 * {@code RedisFuture}, when those classes are present.</li>
 * </ul>
 *
 * <p>The types the application's own expressions call into (method arguments, beans named with {@code @}), the
 * components of a record used as a key, and fallback methods are the application's: it registers them, as for
 * Spring's cache annotations.
 *
 * <p>Registered in {@code META-INF/spring/aot.factories} rather than with {@code @ImportRuntimeHints} on an
 * auto-configuration: the scripts are read by any Redis backend, one the application builds itself from the core
 * included (the auto-configured backends then back off), and the health indicator comes from an auto-configuration of
 * its own, so no one auto-configuration's conditions say when these hints are needed.
 */
class RateLimiterRuntimeHints implements RuntimeHintsRegistrar {

	/** The Lua files {@code LimiterScript} reads, by {@code ClassLoader.getResourceAsStream}. */
	static final String LUA_SCRIPTS = "META-INF/limiter/lua/*.lua";

	@Override
	public void registerHints(RuntimeHints hints, ClassLoader classLoader) {
		hints.resources().registerPattern(LUA_SCRIPTS);
		hints.reflection().registerType(RateLimitExpressionRootObject.class, MemberCategory.INVOKE_PUBLIC_METHODS);
		hints.reflection().registerType(RateLimit.class, MemberCategory.INVOKE_PUBLIC_METHODS);
		for (String healthPackage : List.of(BackendHealth.BOOT_4_PACKAGE, BackendHealth.BOOT_3_PACKAGE)) {
			registerHealth(hints, classLoader, healthPackage);
		}
		registerRedis(hints, classLoader);
	}

	/**
	 * The proxy {@link BackendHealth#asHealthIndicator} makes and what its handler calls, for one Boot line's health
	 * package when present: the interface, found by {@code Class.forName} and whose default methods the handler runs
	 * through {@code InvocationHandler.invokeDefault}; {@code Health.status(String)};
	 * {@code Health.Builder.withDetails(Map)} and {@code build()}.
	 */
	private static void registerHealth(RuntimeHints hints, ClassLoader classLoader, String healthPackage) {
		String indicator = healthPackage + ".HealthIndicator";
		if (!ClassUtils.isPresent(indicator, classLoader)) {
			return;
		}
		hints.proxies().registerJdkProxy(TypeReference.of(indicator));
		hints.reflection().registerType(TypeReference.of(indicator), MemberCategory.INVOKE_PUBLIC_METHODS);
		hints.reflection()
			.registerType(TypeReference.of(healthPackage + ".Health"), type -> type.withMethod("status",
					List.of(TypeReference.of(String.class)), ExecutableMode.INVOKE));
		hints.reflection()
			.registerType(TypeReference.of(healthPackage + ".Health$Builder"),
					type -> type.withMethod("withDetails", List.of(TypeReference.of(Map.class)), ExecutableMode.INVOKE)
						.withMethod("build", List.of(), ExecutableMode.INVOKE));
	}

	/**
	 * What {@code SpringDataRedisScriptExecutor} looks up by name: whether a connection factory is set up for a
	 * cluster ({@code isClusterAware()} on Lettuce's, {@code isRedisClusterAware()} on Jedis's), read without opening a
	 * connection, and {@code io.lettuce.core.RedisFuture}, by which it tells whether Lettuce is present.
	 */
	private static void registerRedis(RuntimeHints hints, ClassLoader classLoader) {
		hints.reflection()
			.registerTypeIfPresent(classLoader, "org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory",
					type -> type.withMethod("isClusterAware", List.of(), ExecutableMode.INVOKE));
		hints.reflection()
			.registerTypeIfPresent(classLoader, "org.springframework.data.redis.connection.jedis.JedisConnectionFactory",
					type -> type.withMethod("isRedisClusterAware", List.of(), ExecutableMode.INVOKE));
		hints.reflection().registerTypeIfPresent(classLoader, "io.lettuce.core.RedisFuture");
	}

}
