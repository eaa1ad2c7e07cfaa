/**
 * Micrometer metrics of rate limiter decisions.
 */
package io.github.limiter.spring.metrics;
