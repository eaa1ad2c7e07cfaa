package io.github.limiter.spring.autoconfigure;

import java.util.Map;

import org.springframework.boot.autoconfigure.condition.ConditionOutcome;
import org.springframework.boot.autoconfigure.condition.SpringBootCondition;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.core.type.AnnotatedTypeMetadata;

import io.github.limiter.spring.autoconfigure.RateLimiterProperties.BackendType;

/**
 * Matches when {@code limiter.backend} is {@code auto} or the backend type of the annotated configuration.
 */
class BackendCondition extends SpringBootCondition {

	@Override
	public ConditionOutcome getMatchOutcome(ConditionContext context, AnnotatedTypeMetadata metadata) {
		Map<String, Object> attributes = metadata.getAnnotationAttributes(ConditionalOnBackend.class.getName());
		BackendType type = (BackendType) attributes.get("value");
		BackendType configured = Binder.get(context.getEnvironment())
			.bind("limiter.backend", BackendType.class)
			.orElse(BackendType.AUTO);
		if (configured == BackendType.AUTO || configured == type) {
			return ConditionOutcome.match("limiter.backend is " + configured);
		}
		return ConditionOutcome.noMatch("limiter.backend is " + configured + ", not " + type);
	}

}
