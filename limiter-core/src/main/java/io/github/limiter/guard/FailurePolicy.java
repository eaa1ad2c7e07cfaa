package io.github.limiter.guard;

/**
 * What a decision is when the backend cannot answer in time (down, frozen, unreachable, or its circuit is open).
 */
public enum FailurePolicy {

	/** Admit the call. Availability first: the service stays up, unprotected, while the backend is away. */
	OPEN,

	/** Reject the call. Protection first: nothing passes while the backend is away. */
	CLOSED,

	/**
	 * Decide on a local, per-instance limit: the same algorithm with its capacity and rate divided by the expected
	 * number of instances, so that all instances together stay close to the shared limit. The default.
	 */
	LOCAL

}
