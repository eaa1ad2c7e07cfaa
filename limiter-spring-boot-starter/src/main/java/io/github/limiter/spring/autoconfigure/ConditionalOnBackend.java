package io.github.limiter.spring.autoconfigure;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

import org.springframework.context.annotation.Conditional;

import io.github.limiter.spring.autoconfigure.RateLimiterProperties.BackendType;

/**
 * Matches when {@code limiter.backend} is unset, {@code auto} or the given type.
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@Documented
@Conditional(BackendCondition.class)
@interface ConditionalOnBackend {

	BackendType value();

}
