/**
 * The Redisson backend: the only place that imports {@code org.redisson}.
 */
package io.github.limiter.backend.redisson;
