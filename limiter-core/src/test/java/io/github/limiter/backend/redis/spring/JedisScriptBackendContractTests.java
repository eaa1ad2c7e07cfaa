package io.github.limiter.backend.redis.spring;

import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.jedis.JedisConnectionFactory;

import io.github.limiter.TimeSource;
import io.github.limiter.backend.BackendContractTests;
import io.github.limiter.spi.RateLimiterBackend;
import io.github.limiter.testsupport.TestRedis;

class JedisScriptBackendContractTests extends BackendContractTests {

	private static JedisConnectionFactory connectionFactory;

	private static ExecutorService executor;

	@BeforeAll
	static void connect() {
		connectionFactory = new JedisConnectionFactory(
				new RedisStandaloneConfiguration("127.0.0.1", TestRedis.standalone().port()));
		connectionFactory.afterPropertiesSet();
		connectionFactory.start();
		executor = Executors.newFixedThreadPool(4);
	}

	@AfterAll
	static void disconnect() {
		connectionFactory.destroy();
		executor.shutdownNow();
	}

	@Override
	protected RateLimiterBackend createBackend(TimeSource clock) {
		return SpringDataRedisScriptExecutor.backend(connectionFactory, executor)
			.keyPrefix(TestRedis.uniquePrefix())
			.testClock(clock)
			.build();
	}

}
