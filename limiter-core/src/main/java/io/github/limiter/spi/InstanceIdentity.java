package io.github.limiter.spi;

import java.security.SecureRandom;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Identity of this application instance (this class loader), for {@link io.github.limiter.Limit.Scope#PER_INSTANCE}
 * keys, and unique tokens for sliding-log members.
 *
 * <p>A token is the random instance ID and a counter: unique across instances without coordination, and cheap (no
 * UUID generation per call).
 */
public final class InstanceIdentity {

	private static final String ID = Long.toString(new SecureRandom().nextLong() & Long.MAX_VALUE, 36);

	private static final AtomicLong SEQUENCE = new AtomicLong();

	private InstanceIdentity() {
	}

	/**
	 * The random ID of this instance, fixed for the life of the class loader.
	 * @return a short alphanumeric string
	 */
	public static String id() {
		return ID;
	}

	/**
	 * A token no other call of any instance gets.
	 * @return a short string
	 */
	public static String nextToken() {
		return ID + '.' + Long.toString(SEQUENCE.incrementAndGet(), 36);
	}

}
