/**
 * Web integration: who is calling (request, client IP, principal), the rate limit header fields and the 429 answer.
 */
package io.github.limiter.spring.web;
