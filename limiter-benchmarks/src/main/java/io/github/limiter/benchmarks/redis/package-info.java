/**
 * The Redis load harness: our backends and their peers on one {@code redis-server}, side by side. Run it with
 * {@code scripts/benchmark.sh redis}; see {@code docs/benchmarks.md}.
 */
package io.github.limiter.benchmarks.redis;
