package io.github.limiter.spring.autoconfigure;

import java.time.Duration;

import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.BeanFactoryAware;
import org.springframework.beans.factory.FactoryBean;
import org.springframework.beans.factory.support.BeanDefinitionRegistry;
import org.springframework.beans.factory.support.RootBeanDefinition;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.context.annotation.ImportBeanDefinitionRegistrar;
import org.springframework.core.ResolvableType;
import org.springframework.core.type.AnnotationMetadata;

import io.github.limiter.spi.RateLimiterBackend;
import io.github.limiter.spring.actuate.BackendHealth;

/**
 * {@link org.springframework.boot.autoconfigure.EnableAutoConfiguration Auto-configuration} of the
 * {@code rateLimiter} health contribution: whether the backend answers, on Spring Boot 3.5 and 4.x alike. Switched off
 * with {@code management.health.ratelimiter.enabled=false}.
 */
@AutoConfiguration(after = RateLimiterAutoConfiguration.class)
@ConditionalOnBean(RateLimiterBackend.class)
@ConditionalOnSwitch("management.health.ratelimiter.enabled")
public final class RateLimiterHealthAutoConfiguration {

	private static final String BEAN_NAME = "rateLimiterHealthIndicator";

	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass(name = BackendHealth.BOOT_4_PACKAGE + ".HealthIndicator")
	@Import(Boot4Registrar.class)
	static class Boot4HealthConfiguration {

	}

	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass(name = BackendHealth.BOOT_3_PACKAGE + ".HealthIndicator")
	@Import(Boot3Registrar.class)
	static class Boot3HealthConfiguration {

	}

	static class Boot4Registrar extends Registrar {

		Boot4Registrar() {
			super(BackendHealth.BOOT_4_PACKAGE);
		}

	}

	static class Boot3Registrar extends Registrar {

		Boot3Registrar() {
			super(BackendHealth.BOOT_3_PACKAGE);
		}

	}

	/**
	 * Registers the indicator by the class of its factory and the health package as its one argument, with the
	 * indicator's real type, so that the health registry finds it before it is created and Spring AOT can write its
	 * registration as code (a bean defined by an instance supplier cannot be processed ahead of time).
	 */
	abstract static class Registrar implements ImportBeanDefinitionRegistrar {

		private final String healthPackage;

		Registrar(String healthPackage) {
			this.healthPackage = healthPackage;
		}

		@Override
		public void registerBeanDefinitions(AnnotationMetadata metadata, BeanDefinitionRegistry registry) {
			if (registry.containsBeanDefinition(BEAN_NAME)) {
				return;
			}
			Class<?> indicator;
			try {
				indicator = Class.forName(this.healthPackage + ".HealthIndicator", false,
						RateLimiterHealthAutoConfiguration.class.getClassLoader());
			}
			catch (ClassNotFoundException ex) {
				return;
			}
			RootBeanDefinition definition = new RootBeanDefinition(HealthIndicatorFactory.class);
			definition.setTargetType(ResolvableType.forClassWithGenerics(HealthIndicatorFactory.class, indicator));
			definition.getConstructorArgumentValues().addIndexedArgumentValue(0, this.healthPackage);
			registry.registerBeanDefinition(BEAN_NAME, definition);
		}

	}

	/**
	 * Makes the health indicator of the backend, as the {@code HealthIndicator} of the given package (Spring Boot 4
	 * moved it).
	 *
	 * @param <T> the indicator type
	 */
	public static final class HealthIndicatorFactory<T> implements FactoryBean<T>, BeanFactoryAware {

		private final String healthPackage;

		private BeanFactory beanFactory;

		/**
		 * A factory of the indicator of one Spring Boot line.
		 * @param healthPackage the package of {@code HealthIndicator} and {@code Health}
		 */
		public HealthIndicatorFactory(String healthPackage) {
			this.healthPackage = healthPackage;
		}

		@Override
		public void setBeanFactory(BeanFactory beanFactory) {
			this.beanFactory = beanFactory;
		}

		@Override
		@SuppressWarnings("unchecked")
		public T getObject() throws ClassNotFoundException {
			RateLimiterBackend backend = this.beanFactory.getBean(io.github.limiter.RateLimiter.class).backend();
			return (T) new BackendHealth(backend, BackendNames.of(backend), Duration.ofSeconds(1))
				.asHealthIndicator(this.healthPackage, RateLimiterHealthAutoConfiguration.class.getClassLoader());
		}

		@Override
		public Class<?> getObjectType() {
			try {
				return Class.forName(this.healthPackage + ".HealthIndicator", false,
						RateLimiterHealthAutoConfiguration.class.getClassLoader());
			}
			catch (ClassNotFoundException ex) {
				return null;
			}
		}

	}

}
