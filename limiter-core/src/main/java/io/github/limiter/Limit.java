package io.github.limiter;

import java.time.Duration;

import io.github.limiter.algorithm.Algorithm;

/**
 * A rate limit rule: an algorithm with its parameters and a name.
 *
 * <p>Instances are immutable and validated when they are built, so a limit that exists is a limit that can be
 * enforced. Build them with the factories of the algorithm classes in {@link io.github.limiter.algorithm}, for example
 * {@code FixedWindow.of("orders", 100, Duration.ofMinutes(1))} or {@code TokenBucket.builder("api")...build()}.
 *
 * <p>The name identifies the limit in storage, metrics and logs; two limits with the same name and key share their
 * state, so give different rules different names.
 */
public interface Limit {

	/**
	 * Name of this limit, used in storage keys, metrics and logs.
	 * @return a non-empty name without braces
	 */
	String name();

	/**
	 * Algorithm that enforces this limit.
	 * @return the algorithm
	 */
	Algorithm algorithm();

	/**
	 * Number reported as the limit of a decision (for example in an {@code X-RateLimit-Limit} header): the maximum
	 * number of permits the limit can grant at once.
	 * @return a positive number
	 */
	long capacity();

	/**
	 * Period over which {@link #capacity()} permits are granted: the window of a window algorithm, the time a bucket
	 * takes to refill from empty. This is the {@code w} of the {@code RateLimit-Policy} HTTP header.
	 * @return a positive duration
	 */
	Duration window();

	/**
	 * Longest time the state of one key must be kept after its last update; after that the key is as good as new and
	 * every backend drops it.
	 * @return a positive duration
	 */
	Duration retention();

	/**
	 * Whether the limit is shared by every instance of the application (the default) or kept per instance.
	 * @return the scope
	 */
	Scope scope();

	/**
	 * The same limit, sharing its state, for a call that accepts to wait at most {@code maxDelay} for its turn. Only a
	 * limit that queues its calls (a {@link io.github.limiter.algorithm.LeakyBucket#queueing queueing leaky bucket})
	 * changes: it then rejects a call whose turn is further away, taking nothing. Others return themselves.
	 * @param maxDelay the longest delay
	 * @return a limit on the same state
	 */
	default Limit withMaxDelay(Duration maxDelay) {
		return this;
	}

	/**
	 * Whether a call that this limit refused could be admitted by waiting for the refusal's retry time with what is
	 * then left of the same wait ({@link #withMaxDelay}, shortened by the time waited). Not when a queueing limit
	 * refused it because its turn lay beyond the bound: the turn comes no closer while the wait left shrinks as fast.
	 * @param refusal this limit's part of the refused decision
	 * @return {@code false} when waiting cannot admit the call
	 */
	default boolean admitsAfterWaiting(Decision refusal) {
		return true;
	}

	/**
	 * Who shares a limit.
	 */
	enum Scope {

		/** One limit for all application instances that use the same backend. */
		SHARED,

		/**
		 * One limit per application instance (Redisson's {@code RateType.PER_CLIENT}). On the local backend this is
		 * the same as {@link #SHARED}.
		 */
		PER_INSTANCE

	}

}
