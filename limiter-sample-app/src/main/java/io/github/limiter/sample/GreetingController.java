package io.github.limiter.sample;

import java.time.Duration;

import jakarta.servlet.http.HttpServletRequest;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

import io.github.limiter.Decision;
import io.github.limiter.Limit;
import io.github.limiter.RateLimiter;
import io.github.limiter.algorithm.TokenBucket;

/**
 * A greeting limited per client IP: a burst of 5, then one per second.
 */
@RestController
class GreetingController {

	private static final Limit PER_IP = TokenBucket.of("greeting", 5, 1, Duration.ofSeconds(1));

	private final RateLimiter limiter;

	GreetingController(RateLimiter limiter) {
		this.limiter = limiter;
	}

	@GetMapping("/hello")
	ResponseEntity<String> hello(HttpServletRequest request) {
		Decision decision = this.limiter.acquire(PER_IP, request.getRemoteAddr());
		ResponseEntity.BodyBuilder response = decision.allowed() ? ResponseEntity.ok()
				: ResponseEntity.status(HttpStatus.TOO_MANY_REQUESTS)
					.header("Retry-After", Long.toString(seconds(decision.retryAfter())));
		return response.header("X-RateLimit-Limit", Long.toString(decision.limit()))
			.header("X-RateLimit-Remaining", Long.toString(decision.remaining()))
			.header("X-RateLimit-Reset", Long.toString(seconds(decision.resetAfter())))
			.body(decision.allowed() ? "Hello!\n" : "Too many requests, try again later.\n");
	}

	private static long seconds(Duration duration) {
		return (duration.toNanos() + 999_999_999L) / 1_000_000_000L;
	}

}
