package io.github.limiter.sample.web;

import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

import io.github.limiter.spring.annotation.RateLimit;

/**
 * The quick-start endpoint: a greeting limited per client IP by the {@code greeting} policy (a burst of 5, then one
 * per second).
 */
@RestController
class GreetingController {

	@GetMapping("/hello")
	@RateLimit(name = "greeting", key = "#ip", policy = "greeting")
	String hello() {
		return "Hello!\n";
	}

}
