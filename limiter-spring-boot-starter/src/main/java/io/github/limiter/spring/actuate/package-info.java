/**
 * The {@code ratelimiters} Actuator endpoint.
 */
package io.github.limiter.spring.actuate;
