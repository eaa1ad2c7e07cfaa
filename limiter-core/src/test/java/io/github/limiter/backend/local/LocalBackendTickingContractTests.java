package io.github.limiter.backend.local;

import io.github.limiter.TimeSource;
import io.github.limiter.backend.BackendContractTests;
import io.github.limiter.spi.RateLimiterBackend;

/**
 * The whole contract on a clock that ticks, its recent reading on time: every call that reading does not admit at once
 * is decided a second time, at the present, and must answer as once.
 */
class LocalBackendTickingContractTests extends BackendContractTests {

	@Override
	protected RateLimiterBackend createBackend(TimeSource clock) {
		return LocalBackend.create(new TimeSource() {

			@Override
			public long nowMicros() {
				return clock.nowMicros();
			}

			@Override
			public boolean ticks() {
				return true;
			}

		}, 1000);
	}

}
