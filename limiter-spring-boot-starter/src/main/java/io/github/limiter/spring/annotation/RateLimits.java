package io.github.limiter.spring.annotation;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Container of repeated {@link RateLimit} annotations: all of them form one all-or-nothing decision.
 */
@Target({ ElementType.METHOD, ElementType.TYPE })
@Retention(RetentionPolicy.RUNTIME)
@Documented
public @interface RateLimits {

	/**
	 * The limits.
	 * @return the limits
	 */
	RateLimit[] value();

}
