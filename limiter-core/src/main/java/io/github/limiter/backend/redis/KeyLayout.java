package io.github.limiter.backend.redis;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Base64;

import io.github.limiter.Limit;
import io.github.limiter.LimitRequest;
import io.github.limiter.algorithm.Algorithm;
import io.github.limiter.spi.InstanceIdentity;

/**
 * How limits and keys become Redis keys: {@code <prefix>{<tag>}<storage>:<limit name>:<key>}.
 *
 * <p>The hash tag is derived from the key alone (six hex digits of a hash), so every limit of one user lands in the
 * same cluster slot and can be decided in one script, and user input can never choose the slot: whatever braces it
 * contains come after the tag. Key material that is long or not printable ASCII is replaced by its SHA-256, so stored
 * keys stay short and identical input gives identical keys on every JVM. The storage code ({@code fw}, {@code sl},
 * {@code sc}, {@code gc}, or {@code rr} for Redisson's RRateLimiter) separates state of different shapes, so that
 * switching a limit to another algorithm starts it afresh instead of failing on a key of the wrong type.
 */
public final class KeyLayout {

	/** Longest key material stored as is. */
	public static final int MAX_PLAIN_LENGTH = 64;

	private final String prefix;

	/**
	 * A layout with a key prefix.
	 * @param prefix the prefix of every key, for example {@code "limiter:"}; no braces
	 */
	public KeyLayout(String prefix) {
		if (prefix == null || prefix.indexOf('{') >= 0 || prefix.indexOf('}') >= 0) {
			throw new IllegalArgumentException("key prefix must not be null or contain braces but was '" + prefix + "'");
		}
		this.prefix = prefix;
	}

	/**
	 * The prefix.
	 * @return the prefix
	 */
	public String prefix() {
		return this.prefix;
	}

	/**
	 * The Redis key of a request.
	 * @param request the request
	 * @return the key
	 */
	public String key(LimitRequest request) {
		return key(request, request.limit().scope() == Limit.Scope.PER_INSTANCE, storage(request.limit().algorithm()));
	}

	/**
	 * The Redis key of a request, with or without this instance's ID.
	 * @param request the request
	 * @param perInstance whether to include this instance's ID, so that each instance has its own state
	 * @param storage the code of the state's shape
	 * @return the key
	 */
	public String key(LimitRequest request, boolean perInstance, String storage) {
		Limit limit = request.limit();
		String material = material(request.key());
		String tag = tag(material.isEmpty() ? limit.name() : material);
		StringBuilder key = new StringBuilder(this.prefix.length() + limit.name().length() + material.length() + 24);
		key.append(this.prefix).append('{').append(tag).append('}').append(storage).append(':').append(limit.name());
		if (perInstance) {
			key.append('@').append(InstanceIdentity.id());
		}
		return key.append(':').append(material).toString();
	}

	/**
	 * The code of the state an algorithm keeps in Redis. Token and leaky buckets share theirs (both are GCRA).
	 * @param algorithm the algorithm
	 * @return a two-letter code
	 */
	static String storage(Algorithm algorithm) {
		return algorithm.code();
	}

	/**
	 * The key as stored: as it is when short and printable ASCII, else {@code ~} and its SHA-256 (a key given as it is
	 * never starts with {@code ~}, so that no key can be chosen to equal another's digest).
	 * @param key the key
	 * @return at most {@value #MAX_PLAIN_LENGTH} characters
	 */
	public static String material(String key) {
		if (key.length() <= MAX_PLAIN_LENGTH && isPrintableAscii(key)) {
			return key;
		}
		try {
			byte[] digest = MessageDigest.getInstance("SHA-256").digest(bytes(key));
			return "~" + Base64.getUrlEncoder().withoutPadding().encodeToString(digest);
		}
		catch (NoSuchAlgorithmException ex) {
			throw new IllegalStateException("SHA-256 is not available", ex);
		}
	}

	/**
	 * The key's UTF-8 bytes, except that a surrogate without its pair (text that is not Unicode, from a JSON
	 * {@code \ud800} escape, say) is written as the three bytes UTF-8 gives any other code point of its range, where
	 * Java's encoder writes {@code ?} for every one: keys that differ only there would share a state, and a key ending
	 * in {@code ?} would share one with a key ending in any lone surrogate. Well-formed text hashes as it always did.
	 */
	static byte[] bytes(String key) {
		java.io.ByteArrayOutputStream lone = null;
		int start = 0;
		for (int i = 0; i < key.length(); i++) {
			char c = key.charAt(i);
			if (Character.isHighSurrogate(c) && i + 1 < key.length() && Character.isLowSurrogate(key.charAt(i + 1))) {
				i++;
			}
			else if (Character.isSurrogate(c)) {
				if (lone == null) {
					lone = new java.io.ByteArrayOutputStream(key.length() * 3);
				}
				lone.writeBytes(key.substring(start, i).getBytes(StandardCharsets.UTF_8));
				lone.write(0xe0 | (c >>> 12));
				lone.write(0x80 | ((c >>> 6) & 0x3f));
				lone.write(0x80 | (c & 0x3f));
				start = i + 1;
			}
		}
		if (lone == null) {
			return key.getBytes(StandardCharsets.UTF_8);
		}
		lone.writeBytes(key.substring(start).getBytes(StandardCharsets.UTF_8));
		return lone.toByteArray();
	}

	private static boolean isPrintableAscii(String key) {
		for (int i = 0; i < key.length(); i++) {
			char c = key.charAt(i);
			if (c < 0x21 || c > 0x7e || c == '~' && i == 0) {
				return false;
			}
		}
		return true;
	}

	/** Six hex digits of the 32-bit FNV-1a hash of the UTF-16 code units. */
	static String tag(String material) {
		int hash = 0x811c9dc5;
		for (int i = 0; i < material.length(); i++) {
			char c = material.charAt(i);
			hash = (hash ^ (c & 0xff)) * 0x01000193;
			hash = (hash ^ (c >>> 8)) * 0x01000193;
		}
		hash ^= hash >>> 16;
		String hex = Integer.toHexString((hash & 0xffffff) | 0x1000000);
		return hex.substring(1);
	}

	/**
	 * The Redis Cluster slot of a key (CRC16 of its hash tag, modulo 16384).
	 * @param key a key
	 * @return the slot
	 */
	public static int slot(String key) {
		int start = key.indexOf('{');
		if (start >= 0) {
			int end = key.indexOf('}', start + 1);
			if (end > start + 1) {
				key = key.substring(start + 1, end);
			}
		}
		byte[] bytes = key.getBytes(StandardCharsets.UTF_8);
		int crc = 0;
		for (byte b : bytes) {
			crc ^= (b & 0xff) << 8;
			for (int i = 0; i < 8; i++) {
				crc = ((crc & 0x8000) != 0) ? (crc << 1) ^ 0x1021 : crc << 1;
			}
		}
		return (crc & 0xffff) % 16384;
	}

}
