/**
 * Auto-configuration of rate limiting: backends, interception, metrics and the Actuator endpoint.
 */
package io.github.limiter.spring.autoconfigure;
