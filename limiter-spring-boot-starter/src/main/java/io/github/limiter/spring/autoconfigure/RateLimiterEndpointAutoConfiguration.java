package io.github.limiter.spring.autoconfigure;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

import io.github.limiter.RateLimiter;
import io.github.limiter.spring.actuate.LimitsInUse;
import io.github.limiter.spring.actuate.RateLimitersEndpoint;
import io.github.limiter.spring.interceptor.RateLimitOperationSource;
import io.github.limiter.spring.retune.RateLimitRetuner;

/**
 * {@link org.springframework.boot.autoconfigure.EnableAutoConfiguration Auto-configuration} of the
 * {@code ratelimiters} Actuator endpoint, when Actuator is present and the endpoint is enabled and exposed.
 */
@AutoConfiguration(after = RateLimiterAutoConfiguration.class)
@ConditionalOnClass({ Endpoint.class, ConditionalOnAvailableEndpoint.class })
@ConditionalOnBean(RateLimiter.class)
@ConditionalOnAvailableEndpoint(RateLimitersEndpoint.class)
public final class RateLimiterEndpointAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean
	RateLimitersEndpoint rateLimitersEndpoint(RateLimitOperationSource rateLimitOperationSource, RateLimiter rateLimiter,
			ObjectProvider<RateLimitRetuner> retuner, ObjectProvider<LimitsInUse> inUse) {
		return new RateLimitersEndpoint(rateLimitOperationSource, rateLimiter, BackendNames.of(rateLimiter.backend()),
				retuner.getIfAvailable(), inUse.getIfAvailable());
	}

	/**
	 * Remembers the limits the auto-configured rate limiter decides, so that the endpoint also lists those used in
	 * code (a listener of the {@code RateLimiter} bean, which takes every {@code RateLimiterListener} bean).
	 */
	@Bean
	@ConditionalOnMissingBean
	LimitsInUse rateLimiterLimitsInUse() {
		return new LimitsInUse();
	}

}
