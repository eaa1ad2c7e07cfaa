package io.github.limiter.spring.autoconfigure;

import jakarta.servlet.DispatcherType;

import org.springframework.beans.factory.DisposableBean;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.ApplicationListener;
import org.springframework.context.event.ContextClosedEvent;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.core.env.Environment;
import org.springframework.http.ProblemDetail;

import org.springframework.web.server.WebFilter;

import io.github.limiter.RateLimiter;
import io.github.limiter.backend.local.LocalBackend;
import io.github.limiter.guard.FailurePolicy;
import io.github.limiter.guard.GuardedBackend;
import io.github.limiter.spring.interceptor.RateLimitOperationSource;
import io.github.limiter.spring.web.ExchangeCaller;
import io.github.limiter.event.RateLimiterListener;
import io.github.limiter.spi.OverrideStore;
import io.github.limiter.spi.RateLimiterBackend;
import io.github.limiter.spring.interceptor.AnnotationRateLimitOperationSource;
import io.github.limiter.spring.retune.RateLimitRetuner;
import io.github.limiter.spring.web.RateLimitExceptionHandler;
import io.github.limiter.spring.web.RateLimitRejectionFilter;
import io.github.limiter.spring.web.RateLimitWebExceptionHandler;

/**
 * {@link org.springframework.boot.autoconfigure.EnableAutoConfiguration Auto-configuration} of rate limiting: a
 * backend (Redisson, Redis or local, in that order of preference), the {@link RateLimiter}, the {@code @RateLimit}
 * interception and, in web applications, the 429 answer.
 *
 * <p>Runs after the Redis and Redisson auto-configurations of both Spring Boot lines, named by string so that a
 * missing one is ignored.
 */
@AutoConfiguration(afterName = { "org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration",
		"org.springframework.boot.autoconfigure.data.redis.RedisAutoConfiguration",
		"org.redisson.spring.starter.RedissonAutoConfigurationV4",
		"org.redisson.spring.starter.RedissonAutoConfigurationV2",
		"org.redisson.spring.starter.RedissonAutoConfiguration" })
@ConditionalOnSwitch("limiter.enabled")
@EnableConfigurationProperties(RateLimiterProperties.class)
@Import({ BackendConfigurations.RedissonBackendConfiguration.class, BackendConfigurations.RedisBackendConfiguration.class,
		BackendConfigurations.LocalBackendConfiguration.class, RateLimitProxyConfiguration.class })
public final class RateLimiterAutoConfiguration {

	private static final System.Logger logger = System.getLogger(RateLimiterAutoConfiguration.class.getName());

	@Bean
	@ConditionalOnMissingBean
	RateLimiter rateLimiter(ObjectProvider<RateLimiterBackend> backend, ObjectProvider<RateLimiterListener> listeners,
			RateLimiterProperties properties, ObjectProvider<RateLimitOperationSource> source) {
		RateLimiterBackend available = backend.getIfAvailable();
		if (available == null) {
			throw new IllegalStateException("limiter.backend=" + properties.getBackend().name().toLowerCase(java.util.Locale.ROOT)
					+ " but no such backend can be created: "
					+ switch (properties.getBackend()) {
						case REDIS -> "there is no RedisConnectionFactory bean (add spring-boot-starter-data-redis)";
						case REDISSON -> "there is no RedissonClient bean (add redisson-spring-boot-starter or define one)";
						default -> "there is no RateLimiterBackend bean";
					});
		}
		RateLimiter limiter = RateLimiter.of(guard(available, properties, source.getIfAvailable()));
		for (RateLimiterListener listener : listeners.orderedStream().toList()) {
			limiter = limiter.withListener(listener);
		}
		return limiter;
	}

	/**
	 * Puts a deadline, a circuit breaker and the failure policy around a shared backend; the local backend needs none.
	 * The failure settings are checked on every backend, so that a bad one fails startup before it is first used.
	 */
	private static RateLimiterBackend guard(RateLimiterBackend backend, RateLimiterProperties properties,
			RateLimitOperationSource source) {
		RateLimiterProperties.Failure failure = properties.getFailure();
		FailurePolicy fallback = failure.getPolicy();
		properties.validate();
		Integer instances = failure.getExpectedInstances();
		if (failure.getFailureThreshold() != null) {
			logger.log(System.Logger.Level.WARNING, "limiter.failure.failure-threshold is no longer used and is ignored: "
					+ "a probe that gets no answer within limiter.failure.max-deadline opens the circuit");
		}
		if (backend instanceof LocalBackend || backend instanceof GuardedBackend) {
			return backend;
		}
		return GuardedBackend.builder(backend)
			.deadline(failure.getDeadline())
			.maxDeadline(failure.getMaxDeadline())
			.openDuration(failure.getOpenDuration())
			.heartbeat(failure.getHeartbeat())
			.expectedInstances((instances != null) ? instances : 0)
			.localMaxKeys(properties.getLocal().getMaxKeys())
			.failurePolicy(requests -> strictest(requests, source, fallback))
			.build();
	}


	/**
	 * Stops the guard's heartbeat and withdraws this instance from the backend's instance count when its context
	 * closes: at the close's start, before any lifecycle bean stops, the Redis connection factory among them, so that
	 * the withdrawal still reaches Redis and the other instances count one fewer at once. (A stop of the lifecycle
	 * beans alone, as a checkpoint takes before a restore, does not close the guard: its heartbeat goes on, its probes
	 * fail on the stopped connection factory and open the circuit, and the first probe after the restart, within
	 * {@code open-duration}, closes it again.) Requests still draining decide
	 * as before; only the heartbeat has stopped.
	 */
	@Bean
	ApplicationListener<ContextClosedEvent> rateLimiterGuardShutdown(RateLimiter rateLimiter,
			org.springframework.context.ApplicationContext context) {
		boolean own = own(rateLimiter, context);
		return event -> {
			if (own && event.getApplicationContext() == context
					&& rateLimiter.backend() instanceof GuardedBackend guarded) {
				guarded.close();
			}
		};
	}

	/**
	 * The guard is closed with its context whatever else happened (closing twice is a no-op), unless the rate
	 * limiter is a parent context's, which a child context uses without owning: closing the child must leave the
	 * parent's guard, its heartbeat and its instance count, running.
	 */
	@Bean
	DisposableBean rateLimiterGuardClose(RateLimiter rateLimiter, org.springframework.context.ApplicationContext context) {
		boolean own = own(rateLimiter, context);
		return () -> {
			if (own && rateLimiter.backend() instanceof GuardedBackend guarded) {
				guarded.close();
			}
		};
	}

	/** Whether the rate limiter is a bean of this context itself, not of an ancestor. */
	private static boolean own(RateLimiter rateLimiter, org.springframework.context.ApplicationContext context) {
		return context.getBeansOfType(RateLimiter.class, false, false).containsValue(rateLimiter);
	}

	/**
	 * Retunes the limits when the environment changes (Spring Cloud's refresh) and applies the runtime overrides
	 * kept in the shared backend, which every instance reads every {@code limiter.retune.refresh}.
	 */
	@Bean
	@ConditionalOnMissingBean
	RateLimitRetuner rateLimitRetuner(AnnotationRateLimitOperationSource source, Environment environment,
			RateLimiterProperties properties, ObjectProvider<RateLimiterBackend> backend) {
		properties.validate();
		RateLimiterProperties.Retune retune = properties.getRetune();
		OverrideStore store = (backend.getIfAvailable() instanceof OverrideStore shared) ? shared : null;
		return new RateLimitRetuner(source, environment, store, retune.getRefresh(), retune.getTimeout());
	}

	/** Of several limits decided together, the strictest policy wins: closed, then local, then open. */
	static FailurePolicy strictest(java.util.List<io.github.limiter.LimitRequest> requests,
			RateLimitOperationSource source, FailurePolicy fallback) {
		FailurePolicy strictest = null;
		for (io.github.limiter.LimitRequest request : requests) {
			FailurePolicy policy = (source != null) ? source.failurePolicy(request.limit().name()) : null;
			policy = (policy != null) ? policy : fallback;
			if (strictest == null || rank(policy) > rank(strictest)) {
				strictest = policy;
			}
		}
		return (strictest != null) ? strictest : fallback;
	}

	private static int rank(FailurePolicy policy) {
		return switch (policy) {
			case OPEN -> 0;
			case LOCAL -> 1;
			case CLOSED -> 2;
		};
	}

	@Configuration(proxyBeanMethods = false)
	@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.REACTIVE)
	@ConditionalOnClass(name = "org.springframework.web.server.WebFilter")
	static class ReactiveWebConfiguration {

		@Bean
		@ConditionalOnMissingBean(name = "rateLimitExchangeFilter")
		WebFilter rateLimitExchangeFilter() {
			return ExchangeCaller.FILTER;
		}

	}

	@Configuration(proxyBeanMethods = false)
	@ConditionalOnWebApplication
	@ConditionalOnClass(ProblemDetail.class)
	static class WebConfiguration {

		@Bean
		@ConditionalOnMissingBean
		RateLimitExceptionHandler rateLimitExceptionHandler() {
			return new RateLimitExceptionHandler();
		}

		@Configuration(proxyBeanMethods = false)
		@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
		@ConditionalOnClass(name = "jakarta.servlet.Filter")
		static class ServletRejectionConfiguration {

			/**
			 * The filter on every dispatch a limited method may be called from: the request's, an asynchronous
			 * handler's second dispatch and an error page's (as Spring Security's chain runs on all three).
			 */
			@Bean
			@ConditionalOnMissingBean(name = "rateLimitRejectionFilter")
			FilterRegistrationBean<RateLimitRejectionFilter> rateLimitRejectionFilter() {
				FilterRegistrationBean<RateLimitRejectionFilter> registration = new FilterRegistrationBean<>(
						new RateLimitRejectionFilter());
				registration.setDispatcherTypes(DispatcherType.REQUEST, DispatcherType.ASYNC, DispatcherType.ERROR);
				registration.setOrder(RateLimitRejectionFilter.ORDER);
				return registration;
			}

		}

		@Configuration(proxyBeanMethods = false)
		@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.REACTIVE)
		@ConditionalOnClass(name = "org.springframework.web.server.WebExceptionHandler")
		static class ReactiveRejectionConfiguration {

			@Bean
			@ConditionalOnMissingBean
			RateLimitWebExceptionHandler rateLimitWebExceptionHandler() {
				return new RateLimitWebExceptionHandler();
			}

		}

	}

}
