package io.github.limiter.spring.autoconfigure;

import org.redisson.api.RedissonClient;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;
import org.springframework.data.redis.connection.RedisConnectionFactory;

import io.github.limiter.backend.local.LocalBackend;
import io.github.limiter.backend.redis.RedisScriptBackend;
import io.github.limiter.backend.redis.spring.SpringDataRedisScriptExecutor;
import io.github.limiter.backend.redisson.RedissonBackend;
import io.github.limiter.spi.RateLimiterBackend;
import io.github.limiter.spring.autoconfigure.RateLimiterProperties.BackendType;

/**
 * One configuration per backend, imported in priority order by {@link RateLimiterAutoConfiguration}: Redisson, then
 * Redis, then local. A {@link RateLimiterBackend} bean of the application always wins, and {@code limiter.backend}
 * forces one.
 */
final class BackendConfigurations {

	private static final System.Logger logger = System.getLogger(BackendConfigurations.class.getName());

	private BackendConfigurations() {
	}

	private static String keyPrefix(RateLimiterProperties properties, Environment environment) {
		String prefix = properties.keyPrefixFor(environment.getProperty("spring.application.name"));
		logger.log(System.Logger.Level.INFO, "Rate limits are kept in Redis under the key prefix '" + prefix + "'"
				+ ((properties.getKeyPrefix() == null) ? " (set limiter.key-prefix to share limits with other applications)"
						: ""));
		return prefix;
	}

	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass(RedissonClient.class)
	@ConditionalOnBean(RedissonClient.class)
	@ConditionalOnMissingBean(RateLimiterBackend.class)
	@ConditionalOnBackend(BackendType.REDISSON)
	static class RedissonBackendConfiguration {

		@Bean
		RedissonBackend rateLimiterBackend(RedissonClient redisson, RateLimiterProperties properties,
				Environment environment) {
			return RedissonBackend.builder(redisson)
				.keyPrefix(keyPrefix(properties, environment))
				.tokenBucketMode(properties.getRedisson().getTokenBucketMode())
				.coalesce(properties.getRedis().isCoalesce())
				.denialCacheSize(properties.getRedis().getDenialCacheSize())
				.build();
		}

	}

	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass(RedisConnectionFactory.class)
	@ConditionalOnBean(RedisConnectionFactory.class)
	@ConditionalOnMissingBean(RateLimiterBackend.class)
	@ConditionalOnBackend(BackendType.REDIS)
	static class RedisBackendConfiguration {

		@Bean
		RedisScriptBackend rateLimiterBackend(ObjectProvider<RedisConnectionFactory> connectionFactory,
				RateLimiterProperties properties, Environment environment) {
			// Lettuce decides without blocking; Jedis has no asynchronous API and runs on the caller's thread.
			return SpringDataRedisScriptExecutor.backend(connectionFactory.getObject(), Runnable::run)
				.keyPrefix(keyPrefix(properties, environment))
				.coalesce(properties.getRedis().isCoalesce())
				.denialCacheSize(properties.getRedis().getDenialCacheSize())
				.build();
		}

	}

	@Configuration(proxyBeanMethods = false)
	@ConditionalOnMissingBean(RateLimiterBackend.class)
	@ConditionalOnBackend(BackendType.LOCAL)
	static class LocalBackendConfiguration {

		@Bean
		LocalBackend rateLimiterBackend(RateLimiterProperties properties) {
			if (properties.getBackend() == BackendType.AUTO) {
				logger.log(System.Logger.Level.WARNING, "No RedissonClient or RedisConnectionFactory bean: rate limits are "
						+ "kept in this JVM and hold per instance, not across instances. Set limiter.backend=local to "
						+ "make this choice explicit.");
			}
			return LocalBackend.create(properties.getLocal().getClock().source(), properties.getLocal().getMaxKeys());
		}

	}

}
