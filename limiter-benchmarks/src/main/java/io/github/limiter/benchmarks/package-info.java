/**
 * JMH benchmarks: run with {@code java -jar} on the shaded classpath, see {@code docs/benchmarks.md}.
 */
package io.github.limiter.benchmarks;
