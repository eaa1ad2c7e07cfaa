/**
 * Retuning limits without a restart: from a changed environment (Spring Cloud's refresh) and from runtime overrides
 * kept in the shared backend, which every instance applies.
 */
package io.github.limiter.spring.retune;
