package io.github.limiter.sample.web;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/** A JSON object's fields in the order written, so that answers read as the README shows them. */
final class Body {

	private Body() {
	}

	/**
	 * @param fields names and values, alternating
	 * @return the fields, in order
	 */
	static Map<String, Object> of(Object... fields) {
		Map<String, Object> body = new LinkedHashMap<>();
		for (int i = 0; i < fields.length; i += 2) {
			body.put((String) fields[i], fields[i + 1]);
		}
		return Collections.unmodifiableMap(body);
	}

}
