package io.github.limiter;

import java.util.Objects;

/**
 * One limit applied to one key, with the number of permits a call costs.
 *
 * @param limit the limit
 * @param key the resolved key (a user ID, an IP address, a SKU...); the empty string means one limit for everyone
 * @param cost permits the call takes, at least 1 and at most the limit's capacity
 */
public record LimitRequest(Limit limit, String key, long cost) {

	/**
	 * Longest key accepted, in characters. Longer input (a hostile header or argument, say) is rejected here, before
	 * any backend sees or hashes it; keys above 64 characters are stored as their SHA-256 anyway.
	 */
	public static final int MAX_KEY_LENGTH = 4096;

	public LimitRequest {
		Objects.requireNonNull(limit, "limit must not be null");
		Objects.requireNonNull(key, "key must not be null");
		if (key.length() > MAX_KEY_LENGTH) {
			throw new IllegalArgumentException("key of limit '" + limit.name() + "' is " + key.length()
					+ " characters long, above the maximum of " + MAX_KEY_LENGTH);
		}
		if (cost < 1) {
			throw new IllegalArgumentException("cost must be at least 1 but was " + cost + " for limit '" + limit.name() + "'");
		}
		if (cost > limit.capacity()) {
			throw new IllegalArgumentException("cost " + cost + " exceeds the capacity " + limit.capacity() + " of limit '"
					+ limit.name() + "', so the call could never be admitted");
		}
	}

	/**
	 * A request for one permit.
	 * @param limit the limit
	 * @param key the key
	 * @return the request
	 */
	public static LimitRequest of(Limit limit, String key) {
		return new LimitRequest(limit, key, 1);
	}

	/**
	 * Checks that no two requests of one decision fall on the same state: the same limit name, the same storage (a
	 * token and a leaky bucket share theirs) and the same key. Every part of a decision is judged against the state
	 * before it, so two such parts would each see room that only one of them has.
	 * @param requests the requests of one decision
	 * @return the requests
	 * @throws IllegalArgumentException naming the limit and key given twice
	 */
	public static java.util.List<LimitRequest> requireDistinct(java.util.List<LimitRequest> requests) {
		java.util.Objects.requireNonNull(requests, "requests must not be null");
		for (int i = 1; i < requests.size(); i++) {
			LimitRequest later = requests.get(i);
			for (int j = 0; j < i; j++) {
				LimitRequest earlier = requests.get(j);
				if (earlier.limit.name().equals(later.limit.name()) && earlier.key.equals(later.key)
						&& earlier.limit.algorithm().code().equals(later.limit.algorithm().code())) {
					throw new IllegalArgumentException("a decision names limit '" + later.limit.name() + "' on key '"
							+ later.key + "' twice (requests " + j + " and " + i + "): ask once, with the costs added up");
				}
			}
		}
		return requests;
	}

}
