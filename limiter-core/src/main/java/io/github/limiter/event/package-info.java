/**
 * Listener hook for decisions and backend failures, which metrics bind to.
 */
package io.github.limiter.event;
