package io.github.limiter.backend.redis.spring;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;

import org.springframework.data.redis.connection.RedisClusterConnection;
import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.ReturnType;

import io.github.limiter.backend.redis.LimiterScript;
import io.github.limiter.backend.redis.RedisScriptBackend;
import io.github.limiter.backend.redis.RedisScriptExecutor;

/**
 * Runs the limiter script through Spring Data Redis, on any {@link RedisConnectionFactory} (Lettuce or Jedis,
 * standalone, Sentinel or Cluster).
 *
 * <p>On Lettuce, asynchronous decisions use the native asynchronous connection and block no thread. On other clients
 * they run the blocking call on the given executor.
 */
public final class SpringDataRedisScriptExecutor implements RedisScriptExecutor {

	private static final boolean LETTUCE_PRESENT = isPresent("io.lettuce.core.RedisFuture");

	private final RedisConnectionFactory connectionFactory;

	private final Executor blockingExecutor;

	private volatile Boolean cluster;

	/**
	 * Creates an executor.
	 * @param connectionFactory the connection factory
	 * @param blockingExecutor where asynchronous decisions run when the client has no asynchronous API
	 */
	public SpringDataRedisScriptExecutor(RedisConnectionFactory connectionFactory, Executor blockingExecutor) {
		this.connectionFactory = Objects.requireNonNull(connectionFactory, "connection factory must not be null");
		this.blockingExecutor = Objects.requireNonNull(blockingExecutor, "executor must not be null");
	}

	/**
	 * A Redis backend on a connection factory, reading the time from Redis.
	 * @param connectionFactory the connection factory
	 * @param blockingExecutor where asynchronous decisions run when the client has no asynchronous API
	 * @return a builder, to set the key prefix and build
	 */
	public static RedisScriptBackend.Builder backend(RedisConnectionFactory connectionFactory, Executor blockingExecutor) {
		return RedisScriptBackend.builder(new SpringDataRedisScriptExecutor(connectionFactory, blockingExecutor));
	}

	@Override
	public boolean isCluster() {
		Boolean result = this.cluster;
		if (result == null) {
			try (RedisConnection connection = this.connectionFactory.getConnection()) {
				result = connection instanceof RedisClusterConnection;
			}
			this.cluster = result;
		}
		return result;
	}

	@Override
	public CompletionStage<List<Object>> execute(LimiterScript script, List<String> keys, List<String> args) {
		byte[][] keysAndArgs = encode(keys, args);
		if (LETTUCE_PRESENT) {
			RedisConnection connection = this.connectionFactory.getConnection();
			CompletionStage<List<Object>> reply;
			try {
				reply = LettuceAsync.evalSha(connection, script, keys.size(), keysAndArgs);
			}
			catch (RuntimeException ex) {
				connection.close();
				throw ex;
			}
			if (reply != null) {
				return reply.whenComplete((result, failure) -> connection.close());
			}
			connection.close();
		}
		return CompletableFuture.supplyAsync(() -> executeBlocking(script, keys.size(), keysAndArgs), this.blockingExecutor);
	}

	private List<Object> executeBlocking(LimiterScript script, int numKeys, byte[][] keysAndArgs) {
		try (RedisConnection connection = this.connectionFactory.getConnection()) {
			try {
				return connection.scriptingCommands().evalSha(script.sha(), ReturnType.MULTI, numKeys, keysAndArgs);
			}
			catch (RuntimeException ex) {
				if (!LimiterScript.isNoScript(ex)) {
					throw ex;
				}
				return connection.scriptingCommands().eval(script.source().getBytes(StandardCharsets.UTF_8),
						ReturnType.MULTI, numKeys, keysAndArgs);
			}
		}
	}

	private static byte[][] encode(List<String> keys, List<String> args) {
		byte[][] keysAndArgs = new byte[keys.size() + args.size()][];
		int i = 0;
		for (String key : keys) {
			keysAndArgs[i++] = key.getBytes(StandardCharsets.UTF_8);
		}
		for (String arg : args) {
			keysAndArgs[i++] = arg.getBytes(StandardCharsets.UTF_8);
		}
		return keysAndArgs;
	}

	private static boolean isPresent(String className) {
		try {
			Class.forName(className, false, SpringDataRedisScriptExecutor.class.getClassLoader());
			return true;
		}
		catch (ClassNotFoundException | LinkageError ex) {
			return false;
		}
	}

}
