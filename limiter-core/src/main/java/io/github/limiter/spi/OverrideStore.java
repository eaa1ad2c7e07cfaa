package io.github.limiter.spi;

import java.util.Map;
import java.util.concurrent.CompletionStage;

/**
 * A shared backend that also keeps runtime overrides of limits' settings (for example a {@code max} raised through an
 * operations endpoint), so that every application instance sharing the backend applies the same numbers, and one
 * that restarts finds them again.
 *
 * <p>An override is text, as a property would be written ({@code max=20}, {@code window=1s}): what the settings mean
 * and whether they are valid is the business of whoever applies them. Overrides are configuration, not state: they
 * do not expire.
 */
public interface OverrideStore {

	/**
	 * Every override.
	 * @return the settings overridden, by limit name, then by setting name
	 */
	CompletionStage<Map<String, Map<String, String>>> overrides();

	/**
	 * Replaces the overrides of one limit.
	 * @param limit the limit's name
	 * @param settings its overridden settings, by name; empty to remove them all
	 * @return every override after the change, as {@link #overrides()} answers
	 */
	CompletionStage<Map<String, Map<String, String>>> override(String limit, Map<String, String> settings);

}
