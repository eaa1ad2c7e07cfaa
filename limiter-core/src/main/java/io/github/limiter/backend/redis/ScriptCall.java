package io.github.limiter.backend.redis;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import io.github.limiter.Decision;
import io.github.limiter.Limit;
import io.github.limiter.LimitRequest;
import io.github.limiter.algorithm.AbstractLimit;
import io.github.limiter.algorithm.Algorithm;
import io.github.limiter.spi.BackendException;

/**
 * One call of the limiter script ({@code decide.lua}): the only encoder of its arguments and the only decoder of its
 * reply. A call holds limits (each sent once, however many decisions use it) and decisions, each over one or more
 * (key, limit, cost); a coalesced batch on a key is several one-limit decisions, a decision over several limits is one
 * decision, and both are the same call.
 *
 * <p>Not thread-safe: built, sent and decoded by one caller.
 */
final class ScriptCall {

	/** Above this many limits, limits are found by a map rather than by a scan. */
	private static final int SCAN = 8;

	private static final String[] NUMBERS = { "0", "1", "2", "3", "4", "5", "6", "7", "8", "9" };

	private final String time;

	private final long clientNow;

	/** One per limit of each decision, in order. */
	private final List<String> keys = new ArrayList<>(1);

	/** The limits, each once. */
	private final List<Limit> limits = new ArrayList<>(1);

	private final List<String> limitArguments = new ArrayList<>(7);

	private final List<String> decisionArguments = new ArrayList<>(5);

	/** Per decision: its limits (indexes into {@link #limits}), whether it acquires, its token. */
	private final List<Entry> decisions = new ArrayList<>(1);

	private Map<Limit, Integer> limitIndex;

	private int files;

	/**
	 * Starts a call.
	 * @param time {@code ""} so that the script reads the Redis time, or a test's time in microseconds
	 * @param clientNow the caller's clock in microseconds, to describe calendar windows around it
	 */
	ScriptCall(String time, long clientNow) {
		this.time = time;
		this.clientNow = clientNow;
	}

	/**
	 * Adds a decision on one limit.
	 * @param operation the script's operation code
	 * @param token the decision's token ({@code ""} when it needs none)
	 * @param request the request
	 * @param key its Redis key
	 */
	void decide(String operation, String token, LimitRequest request, String key) {
		decide(operation, token, List.of(request), List.of(key));
	}

	/**
	 * Adds one all-or-nothing decision over several limits.
	 * @param operation the script's operation code
	 * @param token the decision's token
	 * @param requests the requests
	 * @param keys their Redis keys, in the same order
	 */
	void decide(String operation, String token, List<LimitRequest> requests, List<String> keys) {
		int[] indexes = new int[requests.size()];
		for (int i = 0; i < indexes.length; i++) {
			indexes[i] = limit(requests.get(i).limit());
			this.keys.add(keys.get(i));
		}
		boolean single = indexes.length == 1 && (operation.equals("a") || operation.equals("c"));
		if (single && requests.get(0).cost() == 1 && token.isEmpty()) {
			// The common decision, in two arguments instead of five: Redis spends about 1,000 instructions on each.
			this.decisionArguments.add(operation.equals("a") ? "A" : "C");
			this.decisionArguments.add(number(indexes[0] + 1));
		}
		else {
			if (!single) {
				this.files |= LimiterScript.GENERAL_BIT;
			}
			this.decisionArguments.add(operation);
			this.decisionArguments.add(token);
			this.decisionArguments.add(number(indexes.length));
			for (int i = 0; i < indexes.length; i++) {
				this.decisionArguments.add(number(indexes[i] + 1));
				this.decisionArguments.add(number(requests.get(i).cost()));
			}
		}
		this.decisions.add(new Entry(indexes, acquires(operation), token));
	}

	/** The index of a limit, added if new. */
	private int limit(Limit limit) {
		int count = this.limits.size();
		if (this.limitIndex == null) {
			for (int i = count - 1; i >= 0; i--) {
				if (this.limits.get(i).equals(limit)) {
					return i;
				}
			}
			if (count >= SCAN) {
				this.limitIndex = new HashMap<>();
				for (int i = 0; i < count; i++) {
					this.limitIndex.put(this.limits.get(i), i);
				}
			}
		}
		else {
			Integer known = this.limitIndex.get(limit);
			if (known != null) {
				return known;
			}
		}
		if (this.limitIndex != null) {
			this.limitIndex.put(limit, count);
		}
		// The code, how many parameters follow, then the parameters.
		List<String> parameters = algorithm(limit).scriptParameters(this.clientNow);
		this.limitArguments.add(parameters.get(0));
		this.limitArguments.add(number(parameters.size() - 1));
		this.limitArguments.addAll(parameters.subList(1, parameters.size()));
		this.limits.add(limit);
		this.files |= LimiterScript.files(limit);
		return count;
	}

	private static String number(long value) {
		return (value >= 0 && value < NUMBERS.length) ? NUMBERS[(int) value] : Long.toString(value);
	}

	/**
	 * The script that defines the functions of this call's algorithms, and no others.
	 * @return the script
	 */
	LimiterScript script() {
		return LimiterScript.deciding(this.files);
	}

	/**
	 * The script's keys: one per limit of each decision, in order.
	 * @return the keys
	 */
	List<String> keys() {
		return this.keys;
	}

	/**
	 * The script's arguments.
	 * @return the arguments
	 */
	List<String> arguments() {
		List<String> arguments = new ArrayList<>(1 + this.limitArguments.size() + this.decisionArguments.size());
		arguments.add(this.time);
		arguments.addAll(this.limitArguments);
		arguments.addAll(this.decisionArguments);
		return arguments;
	}

	/**
	 * Reads the script's reply: one text of integers separated by spaces, the time, then five per limit of each
	 * decision.
	 * @param reply the reply, as a {@link RedisScriptExecutor} answers a script that replies with text
	 * @return per decision, in order, one decision per limit, in the order of its requests
	 * @throws BackendException if the reply does not have the shape of this call's
	 */
	List<List<Decision>> decode(List<Object> reply) {
		int expected = 1;
		for (Entry decision : this.decisions) {
			expected += 5 * decision.limits.length;
		}
		long[] values = (reply != null && reply.size() == 1) ? numbers(reply.get(0), expected) : null;
		if (values == null) {
			throw new BackendException("unexpected reply from the " + this + ": " + describe(reply) + " where "
					+ expected + " numbers were due", null);
		}
		long now = values[0];
		List<List<Decision>> answers = new ArrayList<>(this.decisions.size());
		int base = 1;
		for (Entry decision : this.decisions) {
			boolean all = true;
			for (int i = 0; i < decision.limits.length; i++) {
				all &= values[base + 5 * i] == 1;
			}
			List<Decision> parts = new ArrayList<>(decision.limits.length);
			for (int index : decision.limits) {
				Limit limit = this.limits.get(index);
				// A sliding-log admission stored its token: the caller needs it to give the permits back.
				String token = (decision.acquires && all && limit.algorithm() == Algorithm.SLIDING_WINDOW_LOG)
						? decision.token : null;
				parts.add(Decision.of(limit.name(), values[base] == 1, limit.capacity(), values[base + 1],
						values[base + 2], values[base + 3], values[base + 4], now, token));
				base += 5;
			}
			answers.add(parts);
		}
		return answers;
	}

	/**
	 * The integers of a text reply (bytes, or a {@code String} from clients that decode it), separated by single
	 * spaces, or {@code null} unless it holds exactly {@code expected} of them.
	 */
	static long[] numbers(Object text, int expected) {
		CharSequence chars = (text instanceof byte[] bytes) ? new String(bytes, StandardCharsets.US_ASCII)
				: (text instanceof CharSequence sequence) ? sequence : null;
		if (chars == null) {
			return null;
		}
		long[] values = new long[expected];
		int length = chars.length();
		int i = 0;
		for (int count = 0; count < expected; count++) {
			if (count > 0) {
				if (i == length || chars.charAt(i) != ' ') {
					return null;
				}
				i++;
			}
			boolean negative = i < length && chars.charAt(i) == '-';
			int start = negative ? i + 1 : i;
			int end = start;
			long value = 0;
			while (end < length && end - start < 18 && chars.charAt(end) >= '0' && chars.charAt(end) <= '9') {
				value = value * 10 + (chars.charAt(end) - '0');
				end++;
			}
			if (end == start) {
				return null;
			}
			values[count] = negative ? -value : value;
			i = end;
		}
		// Nothing after the last number: no more numbers, no trailing space.
		return (i == length) ? values : null;
	}

	private static String describe(List<Object> reply) {
		if (reply == null) {
			return "none";
		}
		Object only = (reply.size() == 1) ? reply.get(0) : null;
		String text = (only instanceof byte[] bytes) ? new String(bytes, StandardCharsets.US_ASCII)
				: (only instanceof CharSequence chars) ? chars.toString() : String.valueOf(reply);
		return "'" + ((text.length() > 200) ? text.substring(0, 200) + "..." : text) + "'";
	}

	/** Names at most three keys: a batch's message must stay one readable line in a log. */
	@Override
	public String toString() {
		if (this.keys.size() <= 3) {
			return "script over " + this.keys;
		}
		return "script over " + this.keys.size() + " keys " + this.keys.subList(0, 3).toString().replace("]", ", ...]");
	}

	private static boolean acquires(String operation) {
		return operation.equals("a");
	}

	static long number(Object value) {
		if (value instanceof Number number) {
			return number.longValue();
		}
		if (value instanceof byte[] bytes) {
			return Long.parseLong(new String(bytes, StandardCharsets.US_ASCII));
		}
		return Long.parseLong(String.valueOf(value));
	}

	private static AbstractLimit<?> algorithm(Limit limit) {
		if (limit instanceof AbstractLimit<?> known) {
			return known;
		}
		throw new IllegalArgumentException("the Redis backends enforce the limits of io.github.limiter.algorithm, not "
				+ limit.getClass().getName());
	}

	private record Entry(int[] limits, boolean acquires, String token) {
	}

}
