package io.github.limiter.spring.interceptor;

import java.beans.PropertyDescriptor;
import java.lang.reflect.Method;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Collectors;

import org.springframework.beans.BeanUtils;
import org.springframework.beans.BeanWrapper;
import org.springframework.beans.PropertyAccessorFactory;
import org.springframework.boot.context.properties.bind.BindException;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.ConfigurationProperty;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName;
import org.springframework.boot.context.properties.source.MapConfigurationPropertySource;
import org.springframework.boot.convert.ApplicationConversionService;

import io.github.limiter.spring.annotation.RateLimit;
import io.github.limiter.spring.autoconfigure.RateLimiterProperties.Policy;

/**
 * The settings of one {@code @RateLimit}: its runtime overrides laid over its attributes, laid over its policy, laid
 * over {@code limiter.defaults}.
 *
 * <p>The attributes' text is bound to a {@link Policy} by Boot's {@link Binder}, with the conversions that bind the
 * policies themselves, so {@code 1s}, {@code per-instance} or {@code day} mean the same on an annotation and in
 * {@code application.yml}. Each setting is then taken from the first layer that has it, and remembers which layer
 * that was, so that an error names the attribute or the property to fix. The settings are the properties of
 * {@link Policy}; an annotation attribute of the same name sets each of them, so a new setting is a policy property
 * and an attribute, nothing here.
 */
final class RateLimitSettings {

	/** The settings: every property of {@link Policy}, in declaration order of the getters. */
	static final List<String> NAMES = Arrays.stream(BeanUtils.getPropertyDescriptors(Policy.class))
		.filter(property -> property.getReadMethod() != null && property.getWriteMethod() != null)
		.map(PropertyDescriptor::getName)
		.toList();

	/**
	 * The settings a runtime override may change: the numbers and the behaviour, not what names the state (the
	 * algorithm, the scope, a calendar window's unit and zone) nor the policy.
	 */
	static final List<String> TUNABLE = NAMES.stream()
		.filter(name -> !List.of("algorithm", "scope", "calendar", "zone", "policy").contains(name))
		.toList();

	private static final String PREFIX = "rate-limit";

	private static final String ATTRIBUTE = "attribute";

	/** The origin of a setting changed at runtime (through the endpoint, kept in the backend). */
	static final String OVERRIDE = "runtime override";

	private final Map<String, Setting<?>> settings;

	private RateLimitSettings(Map<String, Setting<?>> settings) {
		this.settings = settings;
	}

	/**
	 * Lays the overrides over the attributes, the policy and the defaults.
	 * @param overrides the settings overridden at runtime, by name, as text
	 * @param attributes the attributes that were set, by name, their placeholders resolved
	 * @param policyName the policy's name, empty for none
	 * @param policy the policy, or {@code null}
	 * @param defaults {@code limiter.defaults}
	 * @param where the annotated method, for error messages
	 * @return the settings
	 */
	static RateLimitSettings overlay(Map<String, String> overrides, Map<String, String> attributes, String policyName,
			Policy policy, Policy defaults, String where) {
		BeanWrapper override = PropertyAccessorFactory.forBeanPropertyAccess(bind(overrides, OVERRIDE, where));
		BeanWrapper annotation = PropertyAccessorFactory.forBeanPropertyAccess(bind(attributes, ATTRIBUTE, where));
		BeanWrapper named = (policy != null) ? PropertyAccessorFactory.forBeanPropertyAccess(policy) : null;
		BeanWrapper fallback = PropertyAccessorFactory.forBeanPropertyAccess(defaults);
		Map<String, Setting<?>> settings = new LinkedHashMap<>();
		for (String name : NAMES) {
			Object value = override.getPropertyValue(name);
			if (value != null) {
				settings.put(name, new Setting<>(value, overrides.get(name), OVERRIDE + " '" + name + "'", Level.OVERRIDE));
				continue;
			}
			value = annotation.getPropertyValue(name);
			if (value != null) {
				settings.put(name, new Setting<>(value, attributes.get(name), ATTRIBUTE + " '" + name + "'", Level.ANNOTATION));
				continue;
			}
			value = (named != null) ? named.getPropertyValue(name) : null;
			if (value != null) {
				settings.put(name, new Setting<>(value, String.valueOf(value),
						"limiter.policies." + policyName + "." + kebab(name), Level.POLICY));
				continue;
			}
			value = fallback.getPropertyValue(name);
			if (value != null) {
				settings.put(name, new Setting<>(value, String.valueOf(value), "limiter.defaults." + kebab(name),
						Level.DEFAULTS));
			}
		}
		return new RateLimitSettings(settings);
	}

	/**
	 * The text of the attributes that set a {@link Policy} property, as written (placeholders not yet resolved).
	 * @param annotation the annotation
	 * @return the non-empty attributes, by name
	 */
	static Map<String, String> attributes(RateLimit annotation) {
		Map<String, String> attributes = new LinkedHashMap<>();
		for (String name : NAMES) {
			Object value;
			try {
				Method attribute = RateLimit.class.getMethod(name);
				value = attribute.invoke(annotation);
			}
			catch (ReflectiveOperationException ex) {
				throw new IllegalStateException("@RateLimit has no attribute for the policy property '" + name + "'", ex);
			}
			String text = (value instanceof Object[] array)
					? Arrays.stream(array).map(String::valueOf).collect(Collectors.joining(",")) : String.valueOf(value);
			if (!text.isBlank()) {
				attributes.put(name, text);
			}
		}
		return attributes;
	}

	private static Policy bind(Map<String, String> attributes, String origin, String where) {
		if (attributes.isEmpty()) {
			return new Policy();
		}
		Map<String, String> source = new LinkedHashMap<>();
		attributes.forEach((name, text) -> source.put(PREFIX + "." + kebab(name), text.trim()));
		Binder binder = new Binder(List.of(new MapConfigurationPropertySource(source)), null,
				ApplicationConversionService.getSharedInstance());
		try {
			return binder.bind(PREFIX, Bindable.of(Policy.class)).orElseGet(Policy::new);
		}
		catch (BindException ex) {
			ConfigurationProperty property = ex.getProperty();
			String name = (property != null) ? camel(property.getName()) : ex.getName().toString();
			String text = (property != null) ? String.valueOf(property.getValue()) : "";
			throw RateLimitAnnotationParser.invalid(where, origin + " '" + name + "'", text,
					"cannot be read: " + reason(ex, ex.getTarget().getType().resolve()));
		}
	}

	private static String reason(BindException ex, Class<?> target) {
		if (target != null && target.isEnum()) {
			return "expected one of " + Arrays.stream(target.getEnumConstants())
				.map(constant -> ((Enum<?>) constant).name().toLowerCase(Locale.ROOT).replace('_', '-'))
				.collect(Collectors.joining(", "));
		}
		Throwable root = ex;
		while (root.getCause() != null && root.getCause() != root) {
			root = root.getCause();
		}
		return root.getMessage();
	}

	/**
	 * A setting, or {@code builtIn} when no layer sets it.
	 * @param name a {@link Policy} property
	 * @param builtIn the value when nothing sets it
	 * @param <T> its type
	 * @return the setting
	 */
	@SuppressWarnings("unchecked")
	<T> Setting<T> get(String name, T builtIn) {
		Setting<?> setting = this.settings.get(name);
		return (setting != null) ? (Setting<T>) setting : new Setting<>(builtIn, String.valueOf(builtIn), name, Level.BUILT_IN);
	}

	/**
	 * Where each setting that something set comes from: {@code attribute 'max'}, {@code limiter.policies.api.max} or
	 * {@code limiter.defaults.max}; settings left to their built-in default are absent.
	 * @return the origins, by setting name, in declaration order
	 */
	Map<String, String> sources() {
		Map<String, String> sources = new LinkedHashMap<>();
		this.settings.forEach((name, setting) -> sources.put(name, setting.origin()));
		return sources;
	}

	static String kebab(String attribute) {
		return attribute.replaceAll("([a-z])([A-Z])", "$1-$2").toLowerCase(Locale.ROOT);
	}

	private static String camel(ConfigurationPropertyName name) {
		String dashed = name.getLastElement(ConfigurationPropertyName.Form.DASHED);
		StringBuilder camel = new StringBuilder();
		boolean upper = false;
		for (char c : dashed.toCharArray()) {
			if (c == '-') {
				upper = true;
			}
			else {
				camel.append(upper ? Character.toUpperCase(c) : c);
				upper = false;
			}
		}
		return camel.toString();
	}

	/** A resolved setting and where it came from, for error messages. */
	record Setting<T>(T value, String text, String origin, Level level) {

		boolean explicit() {
			return this.level == Level.OVERRIDE || this.level == Level.ANNOTATION || this.level == Level.POLICY;
		}

	}

	/** Where a setting came from, strongest first. */
	enum Level {

		OVERRIDE, ANNOTATION, POLICY, DEFAULTS, BUILT_IN

	}

}
