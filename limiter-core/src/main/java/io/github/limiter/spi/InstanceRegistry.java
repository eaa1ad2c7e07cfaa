package io.github.limiter.spi;

import java.time.Duration;
import java.util.concurrent.CompletionStage;

/**
 * A shared backend where the application instances that share limits announce themselves, so that each knows how
 * many there are (the {@code LOCAL} failure policy divides limits by that number during an outage).
 *
 * <p>An announcement is a heartbeat: an instance counts as alive for {@code ttl} after its last one, measured by the
 * backend's clock, so skewed instance clocks do not matter. An announcement is also the cheapest proof that the
 * backend answers, and the guard uses it as its probe.
 */
public interface InstanceRegistry {

	/**
	 * Announces this instance as alive for {@code ttl} and counts the instances alive.
	 * @param instance this instance's identity
	 * @param ttl how long the announcement holds
	 * @return the number of instances alive, this one included
	 */
	CompletionStage<Integer> announce(String instance, Duration ttl);

	/**
	 * Removes this instance (on a clean shutdown), so that the others count one fewer at once.
	 * @param instance this instance's identity
	 * @return completes when removed
	 */
	CompletionStage<Void> withdraw(String instance);

}
