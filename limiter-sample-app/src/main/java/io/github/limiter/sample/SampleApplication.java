package io.github.limiter.sample;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;

/**
 * The sample application: rate-limited endpoints with {@code @RateLimit}. Without Redis it runs on the local backend;
 * with {@code spring.data.redis.*} pointing at a Redis, the limits hold across instances.
 */
@SpringBootApplication
public class SampleApplication {

	public static void main(String[] args) {
		SpringApplication.run(SampleApplication.class, args);
	}

}
