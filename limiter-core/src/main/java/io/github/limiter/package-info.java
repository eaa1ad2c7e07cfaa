/**
 * The limiter API: {@link io.github.limiter.Limit limits}, {@link io.github.limiter.Decision decisions} and the
 * {@link io.github.limiter.RateLimiter} facade over a backend.
 */
package io.github.limiter;
