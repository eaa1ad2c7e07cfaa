package io.github.limiter.spring.autoconfigure;

import org.springframework.aop.config.AopConfigUtils;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.beans.factory.support.BeanDefinitionRegistry;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.context.annotation.ImportBeanDefinitionRegistrar;
import org.springframework.context.annotation.Role;
import org.springframework.core.env.Environment;
import org.springframework.core.type.AnnotationMetadata;

import io.github.limiter.RateLimiter;
import io.github.limiter.spring.interceptor.AnnotationRateLimitOperationSource;
import io.github.limiter.spring.interceptor.RateLimitAdvisor;
import io.github.limiter.spring.interceptor.RateLimitInterceptor;
import io.github.limiter.spring.interceptor.RateLimitOperationSource;

/**
 * The infrastructure that applies {@code @RateLimit}: the operation source, the interceptor and the advisor, plus an
 * auto-proxy creator, so that limits apply with or without AspectJ and even with {@code spring.aop.auto=false}.
 * The rate limiter itself is looked up on first use, so the Redis connection is not created while proxies are, and
 * the properties are bound here from the environment rather than injected, so that no application bean is created
 * early by the auto-proxy creator.
 */
@Configuration(proxyBeanMethods = false)
@Role(BeanDefinition.ROLE_INFRASTRUCTURE)
@Import(RateLimitProxyConfiguration.AutoProxyRegistrar.class)
class RateLimitProxyConfiguration {

	@Bean
	@Role(BeanDefinition.ROLE_INFRASTRUCTURE)
	static RateLimitOperationSource rateLimitOperationSource(Environment environment) {
		return new AnnotationRateLimitOperationSource(bind(environment), environment::resolveRequiredPlaceholders);
	}

	@Bean
	@Role(BeanDefinition.ROLE_INFRASTRUCTURE)
	static RateLimitInterceptor rateLimitInterceptor(RateLimitOperationSource rateLimitOperationSource,
			ObjectProvider<RateLimiter> rateLimiter, Environment environment, BeanFactory beanFactory) {
		return new RateLimitInterceptor(rateLimitOperationSource, rateLimiter::getObject, bind(environment), beanFactory);
	}

	@Bean
	@Role(BeanDefinition.ROLE_INFRASTRUCTURE)
	static RateLimitAdvisor rateLimitAdvisor(RateLimitOperationSource rateLimitOperationSource,
			RateLimitInterceptor rateLimitInterceptor, Environment environment) {
		RateLimitAdvisor advisor = new RateLimitAdvisor(rateLimitOperationSource);
		advisor.setAdvice(rateLimitInterceptor);
		advisor.setOrder(bind(environment).getAop().getOrder());
		return advisor;
	}

	private static RateLimiterProperties bind(Environment environment) {
		return Binder.get(environment).bind("limiter", RateLimiterProperties.class).orElseGet(RateLimiterProperties::new);
	}

	/**
	 * Registers the infrastructure auto-proxy creator if the application has none (Boot's AOP auto-configuration
	 * normally registers one, or upgrades this one, and sets class-based proxying).
	 */
	static class AutoProxyRegistrar implements ImportBeanDefinitionRegistrar {

		@Override
		public void registerBeanDefinitions(AnnotationMetadata metadata, BeanDefinitionRegistry registry) {
			AopConfigUtils.registerAutoProxyCreatorIfNecessary(registry);
		}

	}

}
