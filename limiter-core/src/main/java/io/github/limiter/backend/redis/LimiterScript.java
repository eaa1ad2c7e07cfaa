package io.github.limiter.backend.redis;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;

import io.github.limiter.algorithm.Algorithm;

/**
 * The Lua scripts every Redis backend runs: the algorithm files under {@code META-INF/limiter/lua} followed by a
 * driver, composed once and identified by its SHA-1 for {@code EVALSHA}. The driver {@code decide.lua} decides one
 * operation over one or more limits; {@code batch.lua} decides several operations on one key in order.
 */
public final class LimiterScript {

	/** Each algorithm's Lua file once, in the order of the algorithms. */
	private static final List<String> ALGORITHMS = Arrays.stream(Algorithm.values())
		.map(Algorithm::script)
		.distinct()
		.toList();

	private static final LimiterScript DECIDE = new LimiterScript(compose(ALGORITHMS, "decide.lua"));

	/** One batch script per algorithm: a call defines only the Lua functions it runs. */
	private static final Map<Algorithm, LimiterScript> BATCH = batchScripts();

	private static final LimiterScript INSTANCES = new LimiterScript(compose(List.of(), "instances.lua"));

	private final String source;

	private final String sha;

	private LimiterScript(String source) {
		this.source = source;
		this.sha = sha1(source);
	}

	/**
	 * The script that decides one operation over one or more limits.
	 * @return the script
	 */
	public static LimiterScript get() {
		return DECIDE;
	}

	/**
	 * The script that decides several operations on one key of an algorithm, one after the other.
	 * @param algorithm the algorithm of the key's limit
	 * @return the script
	 */
	public static LimiterScript batch(Algorithm algorithm) {
		return BATCH.get(algorithm);
	}

	/**
	 * The script that announces an instance and counts the instances alive ({@code instances.lua}).
	 * @return the script
	 */
	public static LimiterScript instances() {
		return INSTANCES;
	}

	/**
	 * The Lua source, for {@code EVAL} and {@code SCRIPT LOAD}.
	 * @return the source
	 */
	public String source() {
		return this.source;
	}

	/**
	 * The SHA-1 of the source, lower-case hex, for {@code EVALSHA}.
	 * @return the digest
	 */
	public String sha() {
		return this.sha;
	}

	private static Map<Algorithm, LimiterScript> batchScripts() {
		Map<String, LimiterScript> byFile = new HashMap<>();
		Map<Algorithm, LimiterScript> scripts = new EnumMap<>(Algorithm.class);
		for (Algorithm algorithm : Algorithm.values()) {
			scripts.put(algorithm, byFile.computeIfAbsent(algorithm.script(),
					file -> new LimiterScript(compose(List.of(file), "batch.lua"))));
		}
		return scripts;
	}

	private static String compose(List<String> algorithms, String driver) {
		StringBuilder source = new StringBuilder();
		List<String> files = new ArrayList<>();
		files.add("common.lua");
		files.addAll(algorithms);
		files.add(driver);
		for (String file : files) {
			String path = "META-INF/limiter/lua/" + file;
			try (InputStream in = LimiterScript.class.getClassLoader().getResourceAsStream(path)) {
				if (in == null) {
					throw new IllegalStateException("Lua script " + path + " is missing from the classpath");
				}
				source.append(new String(in.readAllBytes(), StandardCharsets.UTF_8)).append('\n');
			}
			catch (IOException ex) {
				throw new UncheckedIOException("Cannot read Lua script " + path, ex);
			}
		}
		return source.toString();
	}

	private static String sha1(String source) {
		try {
			byte[] digest = MessageDigest.getInstance("SHA-1").digest(source.getBytes(StandardCharsets.UTF_8));
			return HexFormat.of().formatHex(digest);
		}
		catch (NoSuchAlgorithmException ex) {
			throw new IllegalStateException("SHA-1 is not available", ex);
		}
	}

	/**
	 * Whether a failure is Redis saying it does not know the script (after a restart, {@code SCRIPT FLUSH} or a
	 * failover), so that the caller retries with the source.
	 * @param failure any failure
	 * @return {@code true} for {@code NOSCRIPT}
	 */
	public static boolean isNoScript(Throwable failure) {
		for (Throwable t = failure; t != null; t = (t.getCause() == t) ? null : t.getCause()) {
			String message = t.getMessage();
			if (message != null && message.contains("NOSCRIPT")) {
				return true;
			}
		}
		return false;
	}

}
