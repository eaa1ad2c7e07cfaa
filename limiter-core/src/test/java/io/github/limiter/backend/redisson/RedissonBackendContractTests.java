package io.github.limiter.backend.redisson;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.redisson.api.RedissonClient;

import io.github.limiter.TimeSource;
import io.github.limiter.backend.BackendContractTests;
import io.github.limiter.spi.RateLimiterBackend;
import io.github.limiter.testsupport.TestRedis;

/**
 * The contract on Redisson, with token buckets on the script (RRateLimiter reads Redisson's own clock and has its
 * own semantics; {@link RedissonRateLimiterTests} covers it).
 */
class RedissonBackendContractTests extends BackendContractTests {

	private static RedissonClient redisson;

	@BeforeAll
	static void connect() {
		redisson = TestRedis.redisson();
	}

	@AfterAll
	static void disconnect() {
		redisson.shutdown();
	}

	@Override
	protected RateLimiterBackend createBackend(TimeSource clock) {
		return RedissonBackend.builder(redisson)
			.keyPrefix(TestRedis.uniquePrefix())
			.tokenBucketMode(RedissonBackend.TokenBucketMode.SCRIPT)
			.testClock(clock)
			.build();
	}

}
