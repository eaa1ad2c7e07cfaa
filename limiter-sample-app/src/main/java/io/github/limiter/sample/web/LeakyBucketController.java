package io.github.limiter.sample.web;

import java.util.Map;

import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

import io.github.limiter.spring.annotation.RateLimit;

/**
 * Seed 001's nginx {@code limit_req}: requests drain at a fixed rate; a burst beyond it either waits its turn
 * ({@code /leaky/queue}, like {@code burst=5}) or is served at once ({@code /leaky/nodelay}, like
 * {@code burst=5 nodelay}), or the first two at once and the rest in turn ({@code /leaky/two-stage}, like
 * {@code burst=5 delay=2}); beyond the burst, requests are rejected.
 */
@RestController
class LeakyBucketController {

	@GetMapping("/leaky/queue")
	@RateLimit(name = "leaky-queue", policy = "leaky-queue")
	Map<String, Object> queue() {
		return Map.of("served", System.currentTimeMillis());
	}

	@GetMapping("/leaky/two-stage")
	@RateLimit(name = "leaky-two-stage", policy = "leaky-two-stage")
	Map<String, Object> twoStage() {
		return Map.of("served", System.currentTimeMillis());
	}

	@GetMapping("/leaky/nodelay")
	@RateLimit(name = "leaky-nodelay", policy = "leaky-nodelay")
	Map<String, Object> nodelay() {
		return Map.of("served", System.currentTimeMillis());
	}

}
