package io.github.limiter.spring.interceptor;

import java.lang.reflect.Proxy;
import java.util.List;

import org.aopalliance.intercept.MethodInterceptor;
import org.junit.jupiter.api.Test;
import org.springframework.aop.framework.ProxyFactory;
import org.springframework.beans.factory.FactoryBean;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import io.github.limiter.RateLimitExceededException;
import io.github.limiter.spring.annotation.RateLimit;
import io.github.limiter.spring.autoconfigure.RateLimiterAutoConfiguration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;
import static org.assertj.core.api.Assertions.assertThatNullPointerException;

/**
 * Beans whose class the application never wrote: a JDK proxy (an HTTP interface client, a MyBatis mapper), a lambda,
 * one implementation behind an interface proxy per repository (as Spring Data makes them), and what a
 * {@link FactoryBean} makes. Each is limited by the annotations of its interface, under a name that is the same in
 * every JVM; and a key that SpEL cannot evaluate says which limit's it is.
 */
class GeneratedBeansTests {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(RateLimiterAutoConfiguration.class))
		.withPropertyValues("limiter.backend=local");

	public interface RemoteClient {

		@RateLimit(key = "#id", max = "2", window = "1h")
		String fetch(String id);

	}

	@Configuration(proxyBeanMethods = false)
	static class JdkProxyClient {

		@Bean
		RemoteClient remoteClient() {
			return (RemoteClient) Proxy.newProxyInstance(RemoteClient.class.getClassLoader(),
					new Class<?>[] { RemoteClient.class }, (proxy, method, args) -> "remote " + args[0]);
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class LambdaClient {

		@Bean
		RemoteClient remoteClient() {
			return id -> "lambda " + id;
		}

	}

	@Test
	void aJdkProxyIsLimitedByItsInterfaceAndNamedAfterIt() {
		assertLimitedAsTheInterfaceSays(JdkProxyClient.class);
	}

	@Test
	void aLambdaIsLimitedByItsInterfaceAndNamedAfterIt() {
		assertLimitedAsTheInterfaceSays(LambdaClient.class);
	}

	private void assertLimitedAsTheInterfaceSays(Class<?> configuration) {
		this.runner.withUserConfiguration(configuration).run(context -> {
			assertThat(context).hasNotFailed();
			RemoteClient client = context.getBean(RemoteClient.class);
			assertThat(admitted(() -> client.fetch("a"), 4)).isEqualTo(2);
			assertThat(admitted(() -> client.fetch("b"), 1)).isEqualTo(1);
			assertThat(names(context.getBean(RateLimitOperationSource.class))).containsExactly("RemoteClient.fetch");
		});
	}

	public interface UserRepository {

		@RateLimit(max = "2", window = "1h")
		String find(String id);

	}

	public interface OrderRepository {

		@RateLimit(max = "2", window = "1h")
		String find(String id);

	}

	/** One class behind every repository, as Spring Data's {@code SimpleJpaRepository}. */
	public static class GenericRepository {

		public String find(String id) {
			return id;
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class Repositories {

		@Bean
		UserRepository users() {
			return repository(UserRepository.class);
		}

		@Bean
		OrderRepository orders() {
			return repository(OrderRepository.class);
		}

		static <T> T repository(Class<T> type) {
			ProxyFactory factory = new ProxyFactory(new GenericRepository());
			factory.addInterface(type);
			factory.addAdvice((MethodInterceptor) invocation -> type.getSimpleName() + " " + invocation.getArguments()[0]);
			return type.cast(factory.getProxy());
		}

	}

	@Test
	void repositoriesBehindOneImplementationKeepALimitEach() {
		this.runner.withUserConfiguration(Repositories.class).run(context -> {
			assertThat(context).hasNotFailed();
			UserRepository users = context.getBean(UserRepository.class);
			OrderRepository orders = context.getBean(OrderRepository.class);
			assertThat(admitted(() -> users.find("a"), 3)).isEqualTo(2);
			assertThat(admitted(() -> orders.find("a"), 3)).isEqualTo(2);
			assertThat(names(context.getBean(RateLimitOperationSource.class)))
				.containsExactlyInAnyOrder("UserRepository.find", "OrderRepository.find");
		});
	}

	public static class Made {

		@RateLimit(max = "0", window = "1h")
		public void call() {
		}

	}

	public static class Maker implements FactoryBean<Made> {

		private final boolean singleton;

		Maker(boolean singleton) {
			this.singleton = singleton;
		}

		@Override
		public Made getObject() {
			return new Made();
		}

		@Override
		public Class<?> getObjectType() {
			return Made.class;
		}

		@Override
		public boolean isSingleton() {
			return this.singleton;
		}

	}

	@Test
	void whatAFactoryBeanMakesIsCheckedAtStartupThoughNoOneAskedForIt() {
		for (boolean singleton : new boolean[] { true, false }) {
			this.runner.withBean("made", Maker.class, () -> new Maker(singleton)).run(context -> {
				assertThat(context).hasFailed();
				assertThat(org.springframework.core.NestedExceptionUtils.getMostSpecificCause(context.getStartupFailure()))
					.hasMessage("Invalid @RateLimit on " + Made.class.getName()
							+ ".call(): attribute 'max' = '0' must be positive");
			});
		}
	}

	static class Keys {

		@RateLimit(name = "by-length", key = "#user.length()", max = "1", window = "1h")
		public String byLength(String user) {
			return user;
		}

		@RateLimit(name = "for-x", key = "#user", max = "1", window = "1h", condition = "#user.startsWith('x')")
		public String forX(String user) {
			return user;
		}

		@RateLimit(name = "by-tenant", key = "@tenants.of(#user)", max = "1", window = "1h")
		public String byTenant(String user) {
			return user;
		}

	}

	public static class Tenants {

		public String of(String user) {
			return user.toUpperCase(java.util.Locale.ROOT);
		}

	}

	@Test
	void anExpressionSpelCannotEvaluateNamesItsLimitAndMethodAndWhatAMethodItCallsThrowsPassesAsItIs() {
		this.runner.withBean(Keys.class).withBean("tenants", Tenants.class).run(context -> {
			Keys keys = context.getBean(Keys.class);
			assertThat(keys.byLength("ann")).isEqualTo("ann");
			assertThatIllegalStateException().isThrownBy(() -> keys.byLength(null))
				.withMessageStartingWith("The key '#user.length()' of limit 'by-length' on Keys.byLength could not be "
						+ "evaluated for this call: EL1011E");
			assertThatIllegalStateException().isThrownBy(() -> keys.forX(null))
				.withMessageStartingWith("The condition '#user.startsWith('x')' of limit 'for-x' on Keys.forX could not "
						+ "be evaluated for this call: EL1011E");
			assertThatNullPointerException().isThrownBy(() -> keys.byTenant(null));
		});
	}

	private static int admitted(Runnable call, int times) {
		int admitted = 0;
		for (int i = 0; i < times; i++) {
			try {
				call.run();
				admitted++;
			}
			catch (RateLimitExceededException ex) {
				// rejected, as the limit says
			}
		}
		return admitted;
	}

	private static List<String> names(RateLimitOperationSource source) {
		return source.rateLimitedMethods()
			.stream()
			.flatMap(method -> method.operations().stream())
			.map(operation -> operation.limit().name())
			.distinct()
			.toList();
	}

}
