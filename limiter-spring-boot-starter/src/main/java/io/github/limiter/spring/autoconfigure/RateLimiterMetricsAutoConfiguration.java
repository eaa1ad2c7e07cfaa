package io.github.limiter.spring.autoconfigure;

import io.micrometer.core.instrument.MeterRegistry;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.context.annotation.Bean;

import io.github.limiter.spi.RateLimiterBackend;
import io.github.limiter.spring.interceptor.RateLimitOperationSource;
import io.github.limiter.spring.metrics.MicrometerRateLimiterListener;

/**
 * {@link org.springframework.boot.autoconfigure.EnableAutoConfiguration Auto-configuration} of the rate limiter's
 * Micrometer metrics, when Micrometer is present. The registry is looked up on the first decision, so this works
 * whichever metrics auto-configuration (Boot 3.5 or 4.x) provides it.
 */
@AutoConfiguration(after = RateLimiterAutoConfiguration.class,
		afterName = { "org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration",
				"org.springframework.boot.actuate.autoconfigure.metrics.CompositeMeterRegistryAutoConfiguration" })
@ConditionalOnClass(MeterRegistry.class)
@ConditionalOnBean(RateLimiterBackend.class)
public final class RateLimiterMetricsAutoConfiguration {

	@Bean
	MicrometerRateLimiterListener micrometerRateLimiterListener(ObjectProvider<MeterRegistry> registry,
			ObjectProvider<RateLimiterBackend> backend, ObjectProvider<RateLimitOperationSource> limits) {
		return new MicrometerRateLimiterListener(registry::getIfUnique, BackendNames.of(backend.getObject()), name -> {
			RateLimitOperationSource source = limits.getIfUnique();
			return source != null && source.failurePolicy(name) != null;
		});
	}

}
