package io.github.limiter.sample.web;

import java.time.Duration;
import java.util.Map;

import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

import io.github.limiter.Decision;
import io.github.limiter.LimitRequest;
import io.github.limiter.RateLimiter;
import io.github.limiter.algorithm.SlidingWindowLog;

/**
 * Seed 000: a sliding window on a sorted set that hands out a token (the member stored for the call) only when the
 * window has room. Uses the programmatic API, since the caller wants the token itself.
 */
@RestController
class TokenController {

	private final RateLimiter limiter;

	private final SlidingWindowLog window;

	TokenController(RateLimiter limiter,
			@org.springframework.beans.factory.annotation.Value("${sample.tokens.max:5}") long max,
			@org.springframework.beans.factory.annotation.Value("${sample.tokens.window:10s}") Duration window) {
		this.limiter = limiter;
		this.window = SlidingWindowLog.of("tokens", max, window);
	}

	@GetMapping("/tokens")
	ResponseEntity<Map<String, Object>> token(@RequestParam(defaultValue = "") String client) {
		if (client.length() > LimitRequest.MAX_KEY_LENGTH) {
			// The programmatic API refuses such a key with an IllegalArgumentException: input is checked first.
			return ResponseEntity.badRequest()
				.body(Map.of("error", "client is " + client.length() + " characters long; at most "
						+ LimitRequest.MAX_KEY_LENGTH + " are accepted"));
		}
		Decision decision = this.limiter.acquire(this.window, client);
		if (!decision.allowed()) {
			return ResponseEntity.status(HttpStatus.TOO_MANY_REQUESTS)
				.body(Map.of("token", "", "retryAfterMillis", decision.retryAfter().toMillis()));
		}
		return ResponseEntity.ok(Map.of("token", decision.token(), "remaining", decision.remaining()));
	}

}
