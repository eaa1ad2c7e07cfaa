package io.github.limiter.spring.autoconfigure;

import java.io.IOException;
import java.lang.reflect.Method;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.aot.generate.ClassNameGenerator;
import org.springframework.aot.generate.DefaultGenerationContext;
import org.springframework.aot.generate.InMemoryGeneratedFiles;
import org.springframework.aot.hint.MemberCategory;
import org.springframework.aot.hint.RuntimeHints;
import org.springframework.aot.hint.TypeReference;
import org.springframework.aot.hint.predicate.RuntimeHintsPredicates;
import org.springframework.context.aot.ApplicationContextAotGenerator;
import org.springframework.context.annotation.AnnotationConfigUtils;
import org.springframework.context.support.GenericApplicationContext;
import org.springframework.core.io.Resource;
import org.springframework.core.io.support.PathMatchingResourcePatternResolver;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.javapoet.ClassName;
import org.springframework.util.ClassUtils;

import io.github.limiter.backend.local.LocalBackend;
import io.github.limiter.spring.actuate.BackendHealth;
import io.github.limiter.spring.annotation.RateLimit;
import io.github.limiter.spring.interceptor.RateLimitExpressionRootObject;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The hints of an application processed ahead of time with the starter (as {@code spring-boot:process-aot} does before
 * a native image is built) cover what the starter and the core reach by name at runtime: every Lua script in the core's
 * {@code META-INF/limiter/lua}, the health indicator's proxy and the {@code Health} methods its handler calls, the
 * root object of key expressions, and what the Spring Data Redis executor looks up. Each check fails when the starter
 * registers no hints ({@code META-INF/spring/aot.factories}); the same tests run on Boot 3.5, whose health classes
 * live in another package.
 */
class RuntimeHintsTests {

	private static RuntimeHints hints;

	@BeforeAll
	static void processTheApplicationAheadOfTime() {
		DefaultGenerationContext generation = new DefaultGenerationContext(
				new ClassNameGenerator(ClassName.get(AheadOfTimeProcessingTests.Application.class)),
				new InMemoryGeneratedFiles());
		try (GenericApplicationContext context = new GenericApplicationContext()) {
			AnnotationConfigUtils.registerAnnotationConfigProcessors(context);
			context.registerBean(AheadOfTimeProcessingTests.Application.class);
			new ApplicationContextAotGenerator().processAheadOfTime(context, generation);
		}
		hints = generation.getRuntimeHints();
	}

	@Test
	void everyLuaScriptOfTheCoreIsAResource() throws IOException {
		Resource[] scripts = new PathMatchingResourcePatternResolver()
			.getResources("classpath*:META-INF/limiter/lua/*.lua");
		List<String> names = Arrays.stream(scripts).map(Resource::getFilename).toList();
		assertThat(names).contains("common.lua", "decide.lua", "instances.lua", "overrides.lua");
		for (String name : names) {
			assertThat(RuntimeHintsPredicates.resource().forResource("META-INF/limiter/lua/" + name))
				.as(name)
				.accepts(hints);
		}
	}

	@Test
	void theHealthIndicatorIsAProxyOfTheHealthIndicatorPresent() throws Exception {
		String healthPackage = ClassUtils.isPresent(BackendHealth.BOOT_4_PACKAGE + ".HealthIndicator", null)
				? BackendHealth.BOOT_4_PACKAGE : BackendHealth.BOOT_3_PACKAGE;
		ClassLoader classLoader = getClass().getClassLoader();
		Object indicator = new BackendHealth(LocalBackend.create(), "local", Duration.ofSeconds(1))
			.asHealthIndicator(healthPackage, classLoader);
		Class<?>[] interfaces = indicator.getClass().getInterfaces();
		assertThat(interfaces).extracting(Class::getName).containsExactly(healthPackage + ".HealthIndicator");
		assertThat(RuntimeHintsPredicates.proxies().forInterfaces(interfaces)).accepts(hints);
		assertThat(RuntimeHintsPredicates.reflection().onType(interfaces[0])).accepts(hints);
		Class<?> health = ClassUtils.forName(healthPackage + ".Health", classLoader);
		Class<?> builder = ClassUtils.forName(healthPackage + ".Health$Builder", classLoader);
		assertThat(invocation(health.getMethod("status", String.class))).accepts(hints);
		assertThat(invocation(builder.getMethod("withDetails", Map.class))).accepts(hints);
		assertThat(invocation(builder.getMethod("build"))).accepts(hints);
	}

	@Test
	void keyExpressionsCanCallTheRootObject() throws NoSuchMethodException {
		assertThat(RuntimeHintsPredicates.reflection()
			.onType(RateLimitExpressionRootObject.class)
			.withMemberCategory(MemberCategory.INVOKE_PUBLIC_METHODS)).accepts(hints);
		assertThat(invocation(RateLimitExpressionRootObject.class.getMethod("methodName"))).accepts(hints);
		assertThat(invocation(RateLimitExpressionRootObject.class.getMethod("args"))).accepts(hints);
		assertThat(invocation(RateLimit.class.getMethod("max"))).accepts(hints);
	}

	@Test
	void theRedisExecutorFindsWhatItLooksUpByName() throws NoSuchMethodException {
		assertThat(invocation(LettuceConnectionFactory.class.getMethod("isClusterAware"))).accepts(hints);
		assertThat(RuntimeHintsPredicates.reflection().onType(TypeReference.of("io.lettuce.core.RedisFuture")))
			.accepts(hints);
	}

	/**
	 * That a method may be invoked by reflection. {@code onMethod(..).invoke()} is deprecated for removal in Spring
	 * Framework 7, for {@code onMethodInvocation}, which 6.2 lacks: these tests run on both (Boot 4.1 and 3.5).
	 */
	@SuppressWarnings("removal")
	private static Predicate<RuntimeHints> invocation(Method method) {
		return RuntimeHintsPredicates.reflection().onMethod(method).invoke();
	}

}
