package io.github.limiter.sample.web;

import java.util.Map;

import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;

import io.github.limiter.RateLimitExceededException;
import io.github.limiter.spring.annotation.RateLimit;

/**
 * Seed 001's flash sale: a token bucket per SKU and a global cap over all SKUs, decided together; a limited buyer
 * gets a friendly "try again later" page from the fallback instead of an error.
 */
@RestController
class SeckillController {

	@PostMapping("/seckill/{skuId}")
	@RateLimit(name = "seckill-sku", key = "#skuId", policy = "flash-sale", fallback = "tryLater")
	@RateLimit(name = "seckill-global", policy = "flash-sale-global", fallback = "tryLater")
	Map<String, Object> buy(@PathVariable String skuId) {
		return Body.of("sku", skuId, "status", "ordered");
	}

	Map<String, Object> tryLater(String skuId, RateLimitExceededException rejection) {
		return Body.of("sku", skuId, "status", "busy", "message", "So many buyers right now! Please try again in a moment.",
				"retryAfterMillis", rejection.getDecision().retryAfter().toMillis());
	}

}
