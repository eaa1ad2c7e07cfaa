package io.github.limiter.sample.redisson;

import java.util.Map;

import org.springframework.context.annotation.Profile;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

import io.github.limiter.spring.annotation.RateLimit;

/**
 * Seed 004 with the {@code redisson} profile: token buckets enforced by Redisson's {@code RRateLimiter}, one shared
 * by every instance ({@code OVERALL}) and one per instance ({@code PER_CLIENT}). Their rates come from
 * {@code application.yml}: change them and restart, and the new rate applies to the existing limiter.
 */
@RestController
@Profile("redisson")
class RedissonController {

	@GetMapping("/redisson/overall")
	@RateLimit(name = "redisson-overall", policy = "redisson-overall")
	Map<String, Object> overall() {
		return Map.of("scope", "OVERALL");
	}

	@GetMapping("/redisson/per-client")
	@RateLimit(name = "redisson-per-client", policy = "redisson-per-client")
	Map<String, Object> perClient() {
		return Map.of("scope", "PER_CLIENT");
	}

}
