package io.github.limiter.sample;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.annotation.Bean;

import io.github.limiter.RateLimiter;
import io.github.limiter.backend.local.LocalBackend;

/**
 * The sample application. Until the starter's {@code @RateLimit} lands, it uses the core API directly on the local
 * backend.
 */
@SpringBootApplication
public class SampleApplication {

	public static void main(String[] args) {
		SpringApplication.run(SampleApplication.class, args);
	}

	@Bean
	RateLimiter rateLimiter() {
		return RateLimiter.of(LocalBackend.create());
	}

}
