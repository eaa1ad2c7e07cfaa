package io.github.limiter.backend.redis;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.Collections;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.atomic.AtomicReferenceArray;

import io.github.limiter.Limit;
import io.github.limiter.algorithm.Algorithm;
import io.github.limiter.algorithm.TokenBucket;

/**
 * The Lua scripts every Redis backend runs, composed once and identified by their SHA-1 for {@code EVALSHA}: the
 * driver {@code decide.lua} ({@link ScriptCall} encodes its arguments) after the algorithm files a call needs, so that
 * a call defines only the Lua functions it runs (every call of a script defines its functions anew, at about 2,000
 * Redis instructions each); {@code instances.lua}; and {@code overrides.lua}.
 *
 * <p>A deciding script is chosen by a bit mask: one bit per algorithm file, one for the warm-up of token buckets, and
 * one for the general operations (records, refunds, deletes, decisions over several limits), whose functions the
 * scripts of calls that only acquire and check single limits, most calls, do not define. Scripts are composed on first
 * use.
 */
public final class LimiterScript {

	/** Reads the time of a call into {@code now}: composed before the drivers that read it. */
	private static final String TIME = "time.lua";

	/** The warm-up of token buckets, after {@code gcra.lua}: only in the scripts of calls with a warming bucket. */
	private static final String WARMUP = "gcra_warmup.lua";

	/**
	 * Each algorithm's Lua file once, in the order of the algorithms, then the warm-up; a set of files is a bit mask
	 * over this list, and a script holds its files in this order.
	 */
	private static final List<String> FILES = java.util.stream.Stream
		.concat(Arrays.stream(Algorithm.values()).map(Algorithm::script).distinct(), java.util.stream.Stream.of(WARMUP))
		.toList();

	private static final int WARMUP_BIT = 1 << FILES.indexOf(WARMUP);

	/** The bit of the general operations: the script's first line declares {@code general} true. */
	static final int GENERAL_BIT = 1 << FILES.size();

	/** The bit of each algorithm's file, by ordinal. */
	private static final int[] FILE_BITS = Arrays.stream(Algorithm.values())
		.mapToInt(algorithm -> 1 << FILES.indexOf(algorithm.script()))
		.toArray();

	/** The deciding script of each set of files, by bit mask, once composed. */
	private static final AtomicReferenceArray<LimiterScript> DECIDE = new AtomicReferenceArray<>(GENERAL_BIT << 1);

	private static final LimiterScript INSTANCES = new LimiterScript(compose(List.of(TIME), "instances.lua"), false);

	private static final LimiterScript OVERRIDES = new LimiterScript(compose(List.of(), "overrides.lua"), false);

	private final String source;

	private final String sha;

	private final boolean text;

	private LimiterScript(String source, boolean text) {
		this.source = source;
		this.sha = sha1(source);
		this.text = text;
	}

	/**
	 * The script that runs every operation on the given limits: it defines the functions of their algorithms, and no
	 * others.
	 * @param limits the limits a call decides, at least one
	 * @return the script
	 */
	public static LimiterScript deciding(Collection<? extends Limit> limits) {
		int files = GENERAL_BIT;
		for (Limit limit : limits) {
			files |= files(limit);
		}
		return deciding(files);
	}

	/**
	 * The deciding script of a set of files.
	 * @param files the bits of {@link #files(Limit)} of each limit, and {@link #GENERAL_BIT} when a decision of the
	 * call is not an acquire or a check of a single limit
	 * @return the script
	 */
	static LimiterScript deciding(int files) {
		LimiterScript script = DECIDE.get(files);
		if (script == null) {
			script = new LimiterScript(compose(files), true);
			// Two threads may compose the same script: both are equal, and the first one stays.
			if (!DECIDE.compareAndSet(files, null, script)) {
				script = DECIDE.get(files);
			}
		}
		return script;
	}

	/** The bits of the files a limit needs, for {@link #deciding(int)}: its algorithm's, and the warm-up's if it warms up. */
	static int files(Limit limit) {
		int files = FILE_BITS[limit.algorithm().ordinal()];
		return (limit instanceof TokenBucket bucket && !bucket.warmup().isZero()) ? files | WARMUP_BIT : files;
	}

	/**
	 * The script that announces an instance and counts the instances alive ({@code instances.lua}).
	 * @return the script
	 */
	public static LimiterScript instances() {
		return INSTANCES;
	}

	/**
	 * The script that reads, and changes, the runtime overrides of limits' settings ({@code overrides.lua}).
	 * @return the script
	 */
	public static LimiterScript overrides() {
		return OVERRIDES;
	}

	/**
	 * Whether the script answers one text (the deciding scripts: their numbers, separated by spaces) rather than an
	 * array. Redis 6 writes every array reply to the socket on its own, and texts together: the replies of many
	 * deciding calls pipelined on one connection leave Redis in one write.
	 * @return {@code true} for a text reply, {@code false} for an array
	 */
	public boolean repliesWithText() {
		return this.text;
	}

	/**
	 * A client's reply to this script as {@link RedisScriptExecutor#execute} answers it: the array's values, or a list
	 * of the one text.
	 * @param reply what the client answered: a list for an array, the text's bytes or {@code String} for a text
	 * @return the reply as a list
	 */
	@SuppressWarnings("unchecked")
	public List<Object> reply(Object reply) {
		return this.text ? Collections.singletonList(reply) : (List<Object>) reply;
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

	private static String compose(int bits) {
		List<String> selected = new ArrayList<>();
		for (int i = 0; i < FILES.size(); i++) {
			if ((bits & (1 << i)) != 0) {
				selected.add(FILES.get(i));
			}
		}
		selected.add(TIME);
		return "local general = " + ((bits & GENERAL_BIT) != 0) + "\n" + compose(selected, "decide.lua");
	}

	/** {@code common.lua}, the given files in order, then the driver. */
	private static String compose(List<String> before, String driver) {
		StringBuilder source = new StringBuilder();
		List<String> files = new ArrayList<>();
		files.add("common.lua");
		files.addAll(before);
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
