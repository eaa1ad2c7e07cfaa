package io.github.limiter.sample.web;

import java.util.List;
import java.util.Map;

import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

import io.github.limiter.spring.annotation.RateLimit;

/**
 * A search in front of a cache that is cold after a restart or a quiet spell: the {@code search} policy's token bucket
 * warms up over 10 s (Guava's warming {@code RateLimiter}), so a cold service takes about a third of the burst and
 * the rate, and the full 20 per second only once the traffic has warmed it.
 */
@RestController
class SearchController {

	@GetMapping("/search")
	@RateLimit(name = "search", policy = "search")
	Map<String, Object> search(@RequestParam(defaultValue = "") String q) {
		return Body.of("query", q, "hits", List.of());
	}

}
