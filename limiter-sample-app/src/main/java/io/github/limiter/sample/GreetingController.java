package io.github.limiter.sample;

import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

import io.github.limiter.spring.annotation.RateLimit;

/**
 * A greeting limited per client IP by the {@code greeting} policy of {@code application.yml}: a burst of 5, then one
 * per second.
 */
@RestController
class GreetingController {

	@GetMapping("/hello")
	@RateLimit(name = "greeting", key = "#ip", policy = "greeting")
	String hello() {
		return "Hello!\n";
	}

}
