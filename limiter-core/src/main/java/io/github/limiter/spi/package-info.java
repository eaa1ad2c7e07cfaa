/**
 * The backend SPI: what a storage implements to enforce limits.
 */
package io.github.limiter.spi;
