package io.github.limiter.spring.autoconfigure;

import java.time.Duration;

import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.BeanFactoryAware;
import org.springframework.beans.factory.support.BeanDefinitionRegistry;
import org.springframework.beans.factory.support.RootBeanDefinition;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.context.annotation.ImportBeanDefinitionRegistrar;
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
@ConditionalOnProperty(prefix = "management.health.ratelimiter", name = "enabled", havingValue = "true", matchIfMissing = true)
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

	/** Registers the indicator with its real type, so that the health registry finds it before it is created. */
	abstract static class Registrar implements ImportBeanDefinitionRegistrar, BeanFactoryAware {

		private final String healthPackage;

		private BeanFactory beanFactory;

		Registrar(String healthPackage) {
			this.healthPackage = healthPackage;
		}

		@Override
		public void setBeanFactory(BeanFactory beanFactory) {
			this.beanFactory = beanFactory;
		}

		@Override
		public void registerBeanDefinitions(AnnotationMetadata metadata, BeanDefinitionRegistry registry) {
			if (registry.containsBeanDefinition(BEAN_NAME)) {
				return;
			}
			ClassLoader classLoader = RateLimiterHealthAutoConfiguration.class.getClassLoader();
			Class<?> indicator;
			try {
				indicator = Class.forName(this.healthPackage + ".HealthIndicator", false, classLoader);
			}
			catch (ClassNotFoundException ex) {
				return;
			}
			RootBeanDefinition definition = new RootBeanDefinition(indicator);
			BeanFactory factory = this.beanFactory;
			definition.setInstanceSupplier(() -> {
				RateLimiterBackend backend = factory.getBean(io.github.limiter.RateLimiter.class).backend();
				try {
					return new BackendHealth(backend, BackendNames.of(backend), Duration.ofSeconds(1))
						.asHealthIndicator(this.healthPackage, classLoader);
				}
				catch (ClassNotFoundException ex) {
					throw new IllegalStateException(ex);
				}
			});
			registry.registerBeanDefinition(BEAN_NAME, definition);
		}

	}

}
