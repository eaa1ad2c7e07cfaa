package io.github.limiter.sample.redisson;

import org.redisson.Redisson;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Profile;

/**
 * The {@code redisson} profile: a Redisson client on the same Redis, which makes the limiter choose its Redisson
 * backend (token buckets on {@code RRateLimiter}).
 */
@Configuration(proxyBeanMethods = false)
@Profile("redisson")
class RedissonProfileConfiguration {

	@Bean(destroyMethod = "shutdown")
	RedissonClient redissonClient(@Value("${spring.data.redis.host:127.0.0.1}") String host,
			@Value("${spring.data.redis.port:6379}") int port) {
		Config config = new Config();
		config.useSingleServer().setAddress("redis://" + host + ":" + port);
		return Redisson.create(config);
	}

}
