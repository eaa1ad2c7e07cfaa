/**
 * The rate limiting algorithms: one class each, pure logic over an immutable state with the time passed in, and one
 * Lua script each under {@code META-INF/limiter/lua} with the same semantics.
 */
package io.github.limiter.algorithm;
