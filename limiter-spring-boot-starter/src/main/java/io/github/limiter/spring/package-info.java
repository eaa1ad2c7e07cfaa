/**
 * Spring Boot integration for limiter: the {@code @RateLimit} annotation, its auto-configuration, metrics and
 * Actuator endpoint. The annotation support is built on top of {@code limiter-core}.
 */
package io.github.limiter.spring;
