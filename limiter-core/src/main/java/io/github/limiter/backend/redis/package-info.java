/**
 * Client-neutral Redis support: the composed Lua script, the key layout with hash tags, all-or-nothing decisions
 * across cluster slots, and the one-interface client adapter.
 */
package io.github.limiter.backend.redis;
