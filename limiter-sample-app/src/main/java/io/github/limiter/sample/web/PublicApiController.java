package io.github.limiter.sample.web;

import java.util.Map;

import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

import io.github.limiter.spring.annotation.RateLimit;

/**
 * A public API limited per client IP with a fixed window: the IP is the request's remote address, so a client
 * cannot escape its limit by sending its own {@code X-Forwarded-For}. Partners, known by their API key, are not
 * limited: the limit's {@code condition} skips their calls.
 */
@RestController
class PublicApiController {

	@GetMapping("/api/quote")
	@RateLimit(name = "public-api", key = "#ip", policy = "public-api",
			condition = "!@partners.isPartner(#request.getHeader('X-Api-Key'))")
	Map<String, Object> quote() {
		return Map.of("quote", "Premature optimization is the root of all evil.");
	}

}
