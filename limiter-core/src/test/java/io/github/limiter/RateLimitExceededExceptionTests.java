package io.github.limiter;

import java.time.Duration;
import java.util.List;

import org.junit.jupiter.api.Test;

import io.github.limiter.Decision.Origin;
import io.github.limiter.algorithm.TokenBucket;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A rejection says why: a limit without room is "exceeded"; a call its failure policy rejected because the store
 * could not answer in time was not measured against the limit at all, and a share decided while the store is down
 * tells nothing of the whole limit.
 */
class RateLimitExceededExceptionTests {

	private final List<LimitRequest> requests = List.of(LimitRequest.of(TokenBucket.of("orders", 10,
			Duration.ofMinutes(1)), "alice"));

	private RateLimitExceededException rejectedBy(Origin origin) {
		Decision decision = Decision.of("orders", false, 10, 0, 1_500_000, 60_000_000, 0, 1_000_000, null)
			.withOrigin(origin);
		return new RateLimitExceededException(decision, this.requests);
	}

	@Test
	void aLimitWithoutRoomIsExceeded() {
		assertThat(rejectedBy(Origin.BACKEND)).hasMessage("Rate limit 'orders' exceeded; retry after 1500 ms");
		assertThat(rejectedBy(Origin.REMEMBERED).getReason()).isEqualTo("exceeded");
	}

	@Test
	void aCallTheFailurePolicyRejectedWasNotChecked() {
		assertThat(rejectedBy(Origin.FAIL_CLOSED))
			.hasMessage("Rate limit 'orders' could not be checked in time; retry after 1500 ms");
		assertThat(rejectedBy(Origin.UNDECIDED).getReason()).isEqualTo("could not be checked in time");
	}

	@Test
	void aShareWithoutRoomSaysItIsThisInstancesShare() {
		assertThat(rejectedBy(Origin.LOCAL_FALLBACK).getReason())
			.isEqualTo("exceeded for this instance's share while the limit's store is down");
	}

}
