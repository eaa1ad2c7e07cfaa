package io.github.limiter.spring.autoconfigure;

import java.util.Locale;

import io.github.limiter.spi.RateLimiterBackend;

/**
 * Short names of backends, for metrics and the endpoint.
 */
final class BackendNames {

	private BackendNames() {
	}

	static String of(RateLimiterBackend backend) {
		if (backend instanceof io.github.limiter.guard.GuardedBackend guarded) {
			backend = guarded.delegate();
		}
		String type = backend.getClass().getName();
		if (type.equals("io.github.limiter.backend.local.LocalBackend")) {
			return "local";
		}
		if (type.equals("io.github.limiter.backend.redis.RedisScriptBackend")) {
			return "redis";
		}
		if (type.equals("io.github.limiter.backend.redisson.RedissonBackend")) {
			return "redisson";
		}
		return backend.getClass().getSimpleName().toLowerCase(Locale.ROOT);
	}

}
