package io.github.limiter.spring.autoconfigure;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.http.ProblemDetail;

import io.github.limiter.RateLimiter;
import io.github.limiter.event.RateLimiterListener;
import io.github.limiter.spi.RateLimiterBackend;
import io.github.limiter.spring.web.RateLimitExceptionHandler;

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
@ConditionalOnProperty(prefix = "limiter", name = "enabled", havingValue = "true", matchIfMissing = true)
@EnableConfigurationProperties(RateLimiterProperties.class)
@Import({ BackendConfigurations.RedissonBackendConfiguration.class, BackendConfigurations.RedisBackendConfiguration.class,
		BackendConfigurations.LocalBackendConfiguration.class, RateLimitProxyConfiguration.class })
public final class RateLimiterAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean
	RateLimiter rateLimiter(ObjectProvider<RateLimiterBackend> backend, ObjectProvider<RateLimiterListener> listeners,
			RateLimiterProperties properties) {
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
		RateLimiter limiter = RateLimiter.of(available);
		for (RateLimiterListener listener : listeners.orderedStream().toList()) {
			limiter = limiter.withListener(listener);
		}
		return limiter;
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

	}

}
