package io.github.limiter.backend.local;

import io.github.limiter.TimeSource;
import io.github.limiter.backend.BackendContractTests;
import io.github.limiter.spi.RateLimiterBackend;

class LocalBackendContractTests extends BackendContractTests {

	@Override
	protected RateLimiterBackend createBackend(TimeSource clock) {
		return LocalBackend.create(clock, 1000);
	}

}
