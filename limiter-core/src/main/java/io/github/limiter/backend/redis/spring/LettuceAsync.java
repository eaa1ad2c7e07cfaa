package io.github.limiter.backend.redis.spring;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletionStage;

import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import org.springframework.data.redis.connection.RedisConnection;

import io.github.limiter.backend.redis.LimiterScript;

/**
 * Non-blocking {@code EVALSHA} on the native Lettuce connection behind a Spring Data connection. Loaded only when
 * Lettuce is on the classpath.
 */
final class LettuceAsync {

	private LettuceAsync() {
	}

	/**
	 * Sends the script, reloading it on {@code NOSCRIPT}.
	 * @return the reply, or {@code null} when the connection is not a Lettuce one
	 */
	@SuppressWarnings("unchecked")
	static CompletionStage<List<Object>> evalSha(RedisConnection connection, LimiterScript script, int numKeys,
			byte[][] keysAndArgs) {
		if (!(connection.getNativeConnection() instanceof RedisClusterAsyncCommands<?, ?> commands)) {
			return null;
		}
		RedisClusterAsyncCommands<byte[], byte[]> bytes = (RedisClusterAsyncCommands<byte[], byte[]>) commands;
		byte[][] keys = Arrays.copyOfRange(keysAndArgs, 0, numKeys);
		byte[][] args = Arrays.copyOfRange(keysAndArgs, numKeys, keysAndArgs.length);
		CompletionStage<List<Object>> reply = bytes.evalsha(script.sha(), ScriptOutputType.MULTI, keys, args);
		return reply.handle((result, failure) -> {
			if (failure == null) {
				return java.util.concurrent.CompletableFuture.completedStage(result);
			}
			if (!LimiterScript.isNoScript(failure)) {
				return java.util.concurrent.CompletableFuture.<List<Object>>failedStage(failure);
			}
			CompletionStage<List<Object>> retry = bytes.eval(script.source().getBytes(StandardCharsets.UTF_8),
					ScriptOutputType.MULTI, keys, args);
			return retry;
		}).thenCompose(stage -> stage);
	}

}
