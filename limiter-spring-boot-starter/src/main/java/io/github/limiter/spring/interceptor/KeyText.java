package io.github.limiter.spring.interceptor;

import java.lang.reflect.Array;
import java.security.Principal;
import java.util.function.Consumer;

/**
 * The text of a key's value: what a limit's key is, for a value a key expression evaluated to.
 *
 * <ul>
 * <li>A principal is keyed by its name: its {@code toString()} can carry a session id or credentials details.</li>
 * <li>An array (of objects or primitives, nested or not) by its elements, not by its identity: {@code {a, b}}. An
 * element's own {@code \}, {@code ,}, <code>{</code> and <code>}</code> are escaped with {@code \}, so that distinct
 * arrays never print alike ({@code {"a, b"}} is <code>{a\, b}</code>, {@code {"a", "b"}} is {@code {a, b}}), and a
 * {@code null} element is <code>\null</code>, not the string {@code "null"}; an array whose elements hold none of
 * these characters prints as it always did.</li>
 * <li>Anything else by its {@code toString()}. A value without a {@code toString()} of its own (an array's element
 * included) would be a key of its own on every call, so that the limit never holds: it is handed to the caller's
 * warning.</li>
 * </ul>
 */
final class KeyText {

	private static final ClassValue<Boolean> IDENTITY_TEXT = new ClassValue<>() {

		@Override
		protected Boolean computeValue(Class<?> type) {
			java.lang.reflect.Method toString = org.springframework.util.ReflectionUtils.findMethod(type, "toString");
			return toString == null || toString.getDeclaringClass() == Object.class;
		}

	};

	private KeyText() {
	}

	/**
	 * The key's text.
	 * @param value the value, or {@code null}
	 * @param identityText told the class of a value (or element) printed by its identity
	 * @return the text, or {@code null} for a {@code null} value
	 */
	static String of(Object value, Consumer<Class<?>> identityText) {
		if (value == null) {
			return null;
		}
		if (value.getClass().isArray()) {
			StringBuilder text = new StringBuilder();
			appendArray(text, value, identityText);
			return text.toString();
		}
		return text(value, identityText);
	}

	private static String text(Object value, Consumer<Class<?>> identityText) {
		if (value instanceof Principal principal) {
			return principal.getName();
		}
		if (IDENTITY_TEXT.get(value.getClass())) {
			identityText.accept(value.getClass());
		}
		return value.toString();
	}

	private static void appendArray(StringBuilder text, Object array, Consumer<Class<?>> identityText) {
		text.append('{');
		for (int i = 0, length = Array.getLength(array); i < length; i++) {
			if (i > 0) {
				text.append(", ");
			}
			Object element = Array.get(array, i);
			if (element == null) {
				// Not "null", which is the text of the string "null"; an element's own backslash is doubled.
				text.append("\\null");
			}
			else if (element.getClass().isArray()) {
				appendArray(text, element, identityText);
			}
			else {
				appendEscaped(text, text(element, identityText));
			}
		}
		text.append('}');
	}

	private static void appendEscaped(StringBuilder text, String element) {
		for (int i = 0; i < element.length(); i++) {
			char c = element.charAt(i);
			if (c == '\\' || c == ',' || c == '{' || c == '}') {
				text.append('\\');
			}
			text.append(c);
		}
	}

}
