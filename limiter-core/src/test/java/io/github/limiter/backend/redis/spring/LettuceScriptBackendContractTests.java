package io.github.limiter.backend.redis.spring;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import io.github.limiter.TimeSource;
import io.github.limiter.backend.BackendContractTests;
import io.github.limiter.spi.RateLimiterBackend;
import io.github.limiter.testsupport.TestRedis;

class LettuceScriptBackendContractTests extends BackendContractTests {

	private static LettuceConnectionFactory connectionFactory;

	@BeforeAll
	static void connect() {
		connectionFactory = TestRedis.lettuce();
	}

	@AfterAll
	static void disconnect() {
		connectionFactory.destroy();
	}

	@Override
	protected RateLimiterBackend createBackend(TimeSource clock) {
		return SpringDataRedisScriptExecutor.backend(connectionFactory, Runnable::run)
			.keyPrefix(TestRedis.uniquePrefix())
			.testClock(clock)
			.build();
	}

}
