/**
 * The Redis backend over Spring Data Redis: the only place that imports {@code org.springframework.data.redis}.
 */
package io.github.limiter.backend.redis.spring;
