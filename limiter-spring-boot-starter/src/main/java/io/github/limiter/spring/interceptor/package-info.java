/**
 * The interception of {@code @RateLimit} methods: annotations parsed once into operations, a thin interceptor, and the
 * advisor that applies it.
 */
package io.github.limiter.spring.interceptor;
