package io.github.limiter.spring.interceptor;

import java.lang.reflect.Array;
import java.lang.reflect.RecordComponent;
import java.security.Principal;
import java.util.Collection;
import java.util.Map;
import java.util.Optional;
import java.util.function.Consumer;

/**
 * The text of a key's value: what a limit's key is, for a value a key expression evaluated to.
 *
 * <ul>
 * <li>A principal is keyed by its name: its {@code toString()} can carry a session id or credentials details.</li>
 * <li>An array (of objects or primitives) by its elements, not by its identity: {@code {a, b}}; a collection, a map
 * and an {@code Optional} by theirs too, as their {@code toString()} prints them ({@code [a, b]}, {@code {k=v}},
 * {@code Optional[a]}), but with an element's own {@code \ , = [ ] { }} escaped by {@code \}, so that distinct values
 * never print alike ({@code {"a, b"}} is <code>{a\, b}</code>, {@code {"a", "b"}} is {@code {a, b}}), and with a
 * {@code null} element as <code>\null</code>, not as the string {@code "null"}. Containers nest: an array in a list
 * prints by its elements. Plain elements print as they always did.</li>
 * <li>Anything else by its {@code toString()}. A value without a {@code toString()} of its own would be a key of its
 * own on every call, so that the limit never holds: such a value, whether it is the key or is found in it (an element,
 * or a record's component), is handed to the caller's warning.</li>
 * </ul>
 */
final class KeyText {

	/** Containers nested deeper than this print by their {@code toString()} (a list holding itself, say). */
	private static final int MAX_DEPTH = 8;

	private static final ClassValue<Boolean> IDENTITY_TEXT = new ClassValue<>() {

		@Override
		protected Boolean computeValue(Class<?> type) {
			java.lang.reflect.Method toString = org.springframework.util.ReflectionUtils.findMethod(type, "toString");
			return toString == null || toString.getDeclaringClass() == Object.class;
		}

	};

	/** A record's component accessors that can be called (a record in a module that does not open it has none). */
	private static final ClassValue<java.lang.reflect.Method[]> COMPONENTS = new ClassValue<>() {

		@Override
		protected java.lang.reflect.Method[] computeValue(Class<?> type) {
			return java.util.Arrays.stream(type.getRecordComponents())
				.map(RecordComponent::getAccessor)
				.filter(accessor -> accessor.trySetAccessible())
				.toArray(java.lang.reflect.Method[]::new);
		}

	};

	/**
	 * Whether a record's components can hold a value printed by its identity, from their declared types: a record of
	 * strings, numbers and enums never does, and is not read component by component on every call.
	 */
	private static final ClassValue<Boolean> MAY_SHOW_IDENTITY = new ClassValue<>() {

		@Override
		protected Boolean computeValue(Class<?> type) {
			return java.util.Arrays.stream(type.getRecordComponents()).map(RecordComponent::getType).anyMatch(part -> {
				boolean openEnded = !java.lang.reflect.Modifier.isFinal(part.getModifiers()) && !part.isPrimitive()
						&& !part.isEnum();
				return part.isArray() || openEnded || part.isRecord() || IDENTITY_TEXT.get(part);
			});
		}

	};

	private KeyText() {
	}

	/**
	 * The key's text.
	 * @param value the value, or {@code null}
	 * @param identityText told the class of a value (or of a part of it) printed by its identity
	 * @return the text, or {@code null} for a {@code null} value
	 */
	static String of(Object value, Consumer<Class<?>> identityText) {
		if (value instanceof String text) {
			return text;
		}
		if (value == null) {
			return null;
		}
		if (value instanceof Principal principal) {
			return principal.getName();
		}
		if (isContainer(value)) {
			StringBuilder text = new StringBuilder();
			appendContainer(text, value, identityText, 0);
			return text.toString();
		}
		String text = value.toString();
		checkIdentity(value, text, identityText);
		return text;
	}

	private static boolean isContainer(Object value) {
		return value.getClass().isArray() || value instanceof Collection || value instanceof Map
				|| value instanceof Optional;
	}

	private static void appendContainer(StringBuilder text, Object container, Consumer<Class<?>> identityText,
			int depth) {
		if (container.getClass().isArray()) {
			text.append('{');
			for (int i = 0, length = Array.getLength(container); i < length; i++) {
				appendElement(text.append((i > 0) ? ", " : ""), Array.get(container, i), identityText, depth);
			}
			text.append('}');
		}
		else if (container instanceof Collection<?> collection) {
			text.append('[');
			String separator = "";
			for (Object element : collection) {
				appendElement(text.append(separator), element, identityText, depth);
				separator = ", ";
			}
			text.append(']');
		}
		else if (container instanceof Map<?, ?> map) {
			text.append('{');
			String separator = "";
			for (Map.Entry<?, ?> entry : map.entrySet()) {
				appendElement(text.append(separator), entry.getKey(), identityText, depth);
				appendElement(text.append('='), entry.getValue(), identityText, depth);
				separator = ", ";
			}
			text.append('}');
		}
		else {
			Optional<?> optional = (Optional<?>) container;
			if (optional.isEmpty()) {
				text.append("Optional.empty");
			}
			else {
				appendElement(text.append("Optional["), optional.get(), identityText, depth);
				text.append(']');
			}
		}
	}

	private static void appendElement(StringBuilder text, Object element, Consumer<Class<?>> identityText, int depth) {
		if (element == null) {
			// Not "null", which is the text of the string "null"; an element's own backslash is doubled.
			text.append("\\null");
		}
		else if (isContainer(element) && depth < MAX_DEPTH) {
			appendContainer(text, element, identityText, depth + 1);
		}
		else {
			String own;
			if (element instanceof Principal principal) {
				own = principal.getName();
			}
			else {
				own = element.toString();
				checkIdentity(element, own, identityText);
			}
			for (int i = 0; i < own.length(); i++) {
				char c = own.charAt(i);
				if (c == '\\' || c == ',' || c == '=' || c == '[' || c == ']' || c == '{' || c == '}') {
					text.append('\\');
				}
				text.append(c);
			}
		}
	}

	/**
	 * Tells of a value printed by its identity: the value itself, or, in a record, a part that its text shows by
	 * identity (a component, or an element of one, whose {@code ClassName@hash} the record's text contains; a record
	 * with a {@code toString()} of its own that leaves such a part out is keyed well).
	 */
	private static void checkIdentity(Object value, String text, Consumer<Class<?>> identityText) {
		Class<?> type = value.getClass();
		if (type.isRecord()) {
			if (MAY_SHOW_IDENTITY.get(type)) {
				checkParts(value, text, identityText, 0);
			}
		}
		else if (type.isArray() || IDENTITY_TEXT.get(type)) {
			identityText.accept(type);
		}
	}

	/** Tells of the parts of a value, found through records and containers, whose identity its text shows. */
	private static void checkParts(Object value, String text, Consumer<Class<?>> identityText, int depth) {
		if (value == null || depth > MAX_DEPTH) {
			return;
		}
		Class<?> type = value.getClass();
		if (type.isRecord()) {
			for (java.lang.reflect.Method accessor : COMPONENTS.get(type)) {
				try {
					checkParts(accessor.invoke(value), text, identityText, depth + 1);
				}
				catch (ReflectiveOperationException | RuntimeException ex) {
					// A component that cannot be read is not checked.
				}
			}
		}
		else if (type.isArray() && !type.getComponentType().isPrimitive()) {
			if (!shows(text, value, identityText)) {
				for (Object element : (Object[]) value) {
					checkParts(element, text, identityText, depth + 1);
				}
			}
		}
		else if (type.isArray()) {
			shows(text, value, identityText);
		}
		else if (value instanceof Collection<?> collection) {
			collection.forEach(element -> checkParts(element, text, identityText, depth + 1));
		}
		else if (value instanceof Map<?, ?> map) {
			map.forEach((key, element) -> {
				checkParts(key, text, identityText, depth + 1);
				checkParts(element, text, identityText, depth + 1);
			});
		}
		else if (value instanceof Optional<?> optional) {
			optional.ifPresent(element -> checkParts(element, text, identityText, depth + 1));
		}
		else if (IDENTITY_TEXT.get(type)) {
			shows(text, value, identityText);
		}
	}

	/** Whether the text shows the value by its identity, as {@code Object.toString()} prints it; told if so. */
	private static boolean shows(String text, Object value, Consumer<Class<?>> identityText) {
		boolean shown = text.contains(value.getClass().getName() + "@" + Integer.toHexString(value.hashCode()));
		if (shown) {
			identityText.accept(value.getClass());
		}
		return shown;
	}

}
