package io.github.limiter.spring.actuate;

import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;

import io.github.limiter.Decision;
import io.github.limiter.Limit;
import io.github.limiter.LimitRequest;
import io.github.limiter.Operation;
import io.github.limiter.event.RateLimiterListener;

/**
 * Remembers the limits the rate limiter has decided, by name, so that the endpoint can list the limits an application
 * uses in code through the {@link io.github.limiter.RateLimiter} bean, which no {@code @RateLimit} declares. The last
 * definition seen under a name is kept; at most {@value #MAX_NAMES} names, the least used dropped first (names made per
 * user or per request would otherwise grow without bound).
 */
public final class LimitsInUse implements RateLimiterListener {

	/** Most names remembered. */
	public static final int MAX_NAMES = 1_000;

	private final Cache<String, Limit> byName = Caffeine.newBuilder().maximumSize(MAX_NAMES).build();

	@Override
	public void onDecision(List<LimitRequest> requests, Operation operation, Decision decision, long nanos) {
		note(requests);
	}

	@Override
	public void onError(List<LimitRequest> requests, Operation operation, Throwable failure, long nanos) {
		note(requests);
	}

	private void note(List<LimitRequest> requests) {
		for (int i = 0; i < requests.size(); i++) {
			Limit limit = requests.get(i).limit();
			Limit known = this.byName.getIfPresent(limit.name());
			// A limit built anew for each call is equal to the one kept: nothing is written.
			if (known != limit && !limit.equals(known)) {
				this.byName.put(limit.name(), limit);
			}
		}
	}

	/**
	 * The limits decided so far, by name.
	 * @return the latest definition under each name, sorted by name
	 */
	public Map<String, Limit> limits() {
		this.byName.cleanUp();
		return new TreeMap<>(this.byName.asMap());
	}

}
