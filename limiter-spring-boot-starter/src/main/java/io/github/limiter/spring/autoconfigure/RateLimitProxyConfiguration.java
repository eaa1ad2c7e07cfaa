package io.github.limiter.spring.autoconfigure;

import org.springframework.aop.config.AopConfigUtils;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.beans.factory.support.BeanDefinitionRegistry;
import org.springframework.context.EnvironmentAware;
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
import io.github.limiter.spring.interceptor.RateLimitStartupValidator;

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
	static AnnotationRateLimitOperationSource rateLimitOperationSource(Environment environment) {
		return new AnnotationRateLimitOperationSource(bind(environment), environment::resolveRequiredPlaceholders);
	}

	@Bean
	@Role(BeanDefinition.ROLE_INFRASTRUCTURE)
	static RateLimitInterceptor rateLimitInterceptor(RateLimitOperationSource rateLimitOperationSource,
			ObjectProvider<RateLimiter> rateLimiter, Environment environment, BeanFactory beanFactory) {
		return new RateLimitInterceptor(rateLimitOperationSource, rateLimiter::getObject, bind(environment), beanFactory,
				new Continuations(beanFactory));
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

	@Bean
	@Role(BeanDefinition.ROLE_INFRASTRUCTURE)
	static RateLimitStartupValidator rateLimitStartupValidator(
			org.springframework.beans.factory.config.ConfigurableListableBeanFactory beanFactory,
			RateLimitOperationSource rateLimitOperationSource) {
		return new RateLimitStartupValidator(beanFactory, rateLimitOperationSource);
	}

	private static RateLimiterProperties bind(Environment environment) {
		return RateLimiterProperties.bind(environment);
	}

	/**
	 * Where {@code CompletionStage} methods run when their decision arrives from another thread: Spring Boot's
	 * {@code applicationTaskExecutor} (bounded by {@code spring.task.execution.pool.*}) when there is one, otherwise a
	 * pool of as many daemon threads as processors. Looked up on first use.
	 */
	static final class Continuations implements java.util.function.Supplier<java.util.concurrent.Executor> {

		private static final String APPLICATION_TASK_EXECUTOR = "applicationTaskExecutor";

		private final BeanFactory beanFactory;

		private volatile java.util.concurrent.Executor executor;

		Continuations(BeanFactory beanFactory) {
			this.beanFactory = beanFactory;
		}

		@Override
		public java.util.concurrent.Executor get() {
			java.util.concurrent.Executor current = this.executor;
			if (current == null) {
				synchronized (this) {
					current = this.executor;
					if (current == null) {
						current = (this.beanFactory.containsBean(APPLICATION_TASK_EXECUTOR)) ? this.beanFactory
							.getBean(APPLICATION_TASK_EXECUTOR, java.util.concurrent.Executor.class) : ownPool();
						this.executor = current;
					}
				}
			}
			return current;
		}

		private static java.util.concurrent.Executor ownPool() {
			int threads = Runtime.getRuntime().availableProcessors();
			java.util.concurrent.ThreadPoolExecutor pool = new java.util.concurrent.ThreadPoolExecutor(threads, threads,
					30, java.util.concurrent.TimeUnit.SECONDS, new java.util.concurrent.LinkedBlockingQueue<>(), runnable -> {
						Thread thread = new Thread(runnable, "limiter-continuation");
						thread.setDaemon(true);
						return thread;
					});
			pool.allowCoreThreadTimeOut(true);
			return pool;
		}

	}

	/**
	 * Registers the infrastructure auto-proxy creator if the application has none (Boot's AOP auto-configuration
	 * normally registers one, or upgrades this one, and sets class-based proxying). The creator registered here
	 * proxies classes, as {@code spring.aop.proxy-target-class} says (true by default), so that without Boot's AOP
	 * ({@code spring.aop.auto=false}) a limit never turns a bean injected by its class into an interface proxy. A creator
	 * the application registered itself ({@code @EnableCaching(proxyTargetClass = false)}, say) keeps its own choice.
	 */
	static class AutoProxyRegistrar implements ImportBeanDefinitionRegistrar, EnvironmentAware {

		private Environment environment;

		@Override
		public void setEnvironment(Environment environment) {
			this.environment = environment;
		}

		@Override
		public void registerBeanDefinitions(AnnotationMetadata metadata, BeanDefinitionRegistry registry) {
			BeanDefinition registered = AopConfigUtils.registerAutoProxyCreatorIfNecessary(registry);
			if (registered != null && this.environment.getProperty("spring.aop.proxy-target-class", Boolean.class, true)) {
				AopConfigUtils.forceAutoProxyCreatorToUseClassProxying(registry);
			}
		}

	}

}
