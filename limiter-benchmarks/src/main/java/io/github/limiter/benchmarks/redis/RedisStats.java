package io.github.limiter.benchmarks.redis;

import java.util.List;

import io.lettuce.core.KeyScanCursor;
import io.lettuce.core.RedisClient;
import io.lettuce.core.ScanArgs;
import io.lettuce.core.ScanCursor;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;

/**
 * What Redis itself says about a round: commands executed ({@code INFO commandstats}, commands that scripts run
 * included, the harness's own {@code INFO} excluded), CPU time ({@code INFO cpu}) and memory ({@code MEMORY USAGE}).
 */
final class RedisStats implements AutoCloseable {

	private final RedisClient client;

	private final StatefulRedisConnection<String, String> connection;

	private final RedisCommands<String, String> redis;

	RedisStats(int port) {
		this.client = RedisClient.create("redis://127.0.0.1:" + port);
		this.connection = this.client.connect();
		this.redis = this.connection.sync();
	}

	String version() {
		return field(this.redis.info("server"), "redis_version");
	}

	/** Empties Redis and its statistics before a round. */
	void flush() {
		this.redis.flushall();
		this.redis.scriptFlush();
		this.redis.configResetstat();
	}

	Snapshot snapshot() {
		long commands = 0;
		long scriptMicros = 0;
		for (String line : this.redis.info("commandstats").split("\r?\n")) {
			// cmdstat_evalsha:calls=123,usec=...
			if (line.startsWith("cmdstat_") && !line.startsWith("cmdstat_info:")) {
				int calls = line.indexOf("calls=");
				commands += Long.parseLong(line.substring(calls + 6, line.indexOf(',', calls)));
				if (line.startsWith("cmdstat_eval")) {
					// The time of script calls, the commands they run included.
					int usec = line.indexOf("usec=");
					scriptMicros += Long.parseLong(line.substring(usec + 5, line.indexOf(',', usec)));
				}
			}
		}
		String cpu = this.redis.info("cpu");
		double seconds = Double.parseDouble(field(cpu, "used_cpu_sys")) + Double.parseDouble(field(cpu, "used_cpu_user"));
		return new Snapshot(commands, (long) (seconds * 1e6), scriptMicros);
	}

	/** The sum of {@code MEMORY USAGE} over every key in Redis. */
	long memoryUsageOfAllKeys() {
		long total = 0;
		ScanCursor cursor = ScanCursor.INITIAL;
		do {
			KeyScanCursor<String> page = this.redis.scan(cursor, ScanArgs.Builder.limit(1000));
			List<String> keys = page.getKeys();
			for (String key : keys) {
				Long usage = this.redis.memoryUsage(key);
				total += (usage != null) ? usage : 0;
			}
			cursor = page;
		}
		while (!cursor.isFinished());
		return total;
	}

	private static String field(String info, String name) {
		for (String line : info.split("\r?\n")) {
			if (line.startsWith(name + ":")) {
				return line.substring(name.length() + 1).trim();
			}
		}
		throw new IllegalStateException("INFO has no " + name + ": " + info);
	}

	@Override
	public void close() {
		this.connection.close();
		this.client.shutdown();
	}

	/**
	 * Counters at one instant.
	 * @param commands commands executed since the statistics were reset
	 * @param cpuMicros CPU time of the Redis process
	 * @param scriptMicros time Redis spent running {@code EVAL} and {@code EVALSHA}, by its command statistics
	 */
	record Snapshot(long commands, long cpuMicros, long scriptMicros) {
	}

}
