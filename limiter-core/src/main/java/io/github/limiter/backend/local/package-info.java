/**
 * The in-process backend.
 */
package io.github.limiter.backend.local;
