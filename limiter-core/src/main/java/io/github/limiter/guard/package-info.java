/**
 * Backend outages: a deadline on every decision, a circuit breaker, and the failure policy that decides meanwhile.
 */
package io.github.limiter.guard;
