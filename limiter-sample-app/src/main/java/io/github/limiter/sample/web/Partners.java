package io.github.limiter.sample.web;

import java.util.List;
import java.util.Set;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.stereotype.Component;

/**
 * The partners whose API keys the public API does not limit, from {@code sample.partner-api-keys}: read by the
 * condition of {@code /api/quote}'s limit.
 */
@Component("partners")
public class Partners {

	private final Set<String> apiKeys;

	Partners(@Value("${sample.partner-api-keys:}") List<String> apiKeys) {
		this.apiKeys = Set.copyOf(apiKeys);
	}

	/**
	 * Whether an API key is a partner's.
	 * @param apiKey the request's {@code X-Api-Key}, or {@code null}
	 * @return {@code true} for a partner
	 */
	public boolean isPartner(String apiKey) {
		return apiKey != null && this.apiKeys.contains(apiKey);
	}

}
