package io.github.limiter.sample.web;

import java.util.Map;

import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;

import io.github.limiter.spring.annotation.RateLimit;

/**
 * Seed 003: a user may send at most one message per calendar day (from local midnight in {@code sample.zone}) and at
 * most three per seven days, decided as one: a message refused by one limit consumes nothing of the other.
 */
@RestController
class MessageController {

	@PostMapping("/messages/{userId}")
	@RateLimit(name = "message-daily", key = "#userId", policy = "message-daily")
	@RateLimit(name = "message-weekly", key = "#userId", policy = "message-weekly")
	Map<String, Object> send(@PathVariable String userId) {
		return Body.of("user", userId, "sent", true);
	}

}
