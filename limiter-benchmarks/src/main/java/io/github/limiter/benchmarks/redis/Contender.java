package io.github.limiter.benchmarks.redis;

/**
 * One rate limiter on the harness's Redis: it takes decisions for a rule, one key at a time, from many threads.
 */
interface Contender extends AutoCloseable {

	/**
	 * A short name for the tables.
	 * @return the name
	 */
	String name();

	/**
	 * Prepares decisions for a rule; called before each round, after Redis was flushed.
	 * @param rule the rule of the round's workload
	 */
	void prepare(Rule rule);

	/**
	 * One decision, blocking the caller until it is known.
	 * @param key the key
	 * @return whether the call is admitted
	 */
	boolean decide(String key);

	@Override
	default void close() {
	}

	/**
	 * A limit of {@code permits} per {@code periodMillis}, which every contender expresses in its own terms.
	 * @param permits permits per period
	 * @param periodMillis the period
	 */
	record Rule(long permits, long periodMillis) {

		double permitsPerSecond() {
			return this.permits * 1000.0 / this.periodMillis;
		}

	}

}
