/**
 * The {@link io.github.limiter.spring.annotation.RateLimit} annotation.
 */
package io.github.limiter.spring.annotation;
