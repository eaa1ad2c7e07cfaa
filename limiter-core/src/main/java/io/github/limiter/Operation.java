package io.github.limiter;

/**
 * What a decision does to the state of the limits it involves.
 */
public enum Operation {

	/**
	 * Consume the cost when every limit has room for it, otherwise consume nothing (all or nothing).
	 */
	ACQUIRE,

	/**
	 * Only tell whether an {@link #ACQUIRE} of the same cost would be admitted; consume nothing. For example "is this
	 * user over the failed-login limit?". The decision's figures are the acquire's: when it would be admitted,
	 * {@link io.github.limiter.Decision#remaining()} and {@link io.github.limiter.Decision#resetAfter()} say what
	 * would be left after it (a fresh key of 5 checks as 4 remaining), though nothing was taken.
	 */
	CHECK,

	/**
	 * Consume the cost on every limit whatever the outcome, saturating at the limit; the decision tells whether the
	 * recorded calls were still within the limit. For example "record one more failed login".
	 */
	RECORD,

	/**
	 * Decide and consume exactly like {@link #ACQUIRE}, for a limit in shadow mode: the caller lets the call through
	 * whatever the answer and only counts the would-be rejections (to dark-launch a new limit).
	 */
	SHADOW;

	/**
	 * Whether the operation consumes when every limit has room and nothing otherwise.
	 * @return {@code true} for {@link #ACQUIRE} and {@link #SHADOW}
	 */
	public boolean acquires() {
		return this == ACQUIRE || this == SHADOW;
	}

}
