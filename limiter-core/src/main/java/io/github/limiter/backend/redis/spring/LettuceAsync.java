package io.github.limiter.backend.redis.spring;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;

import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.async.RedisAsyncCommands;
import io.lettuce.core.cluster.api.async.RedisAdvancedClusterAsyncCommands;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import io.netty.util.concurrent.FastThreadLocalThread;
import io.netty.util.internal.ThreadExecutorMap;
import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import io.github.limiter.backend.redis.LimiterScript;

/**
 * Non-blocking {@code EVALSHA} on the native Lettuce connection: the factory's shared connection, used directly, or
 * the one behind a Spring Data connection. Loaded only when Lettuce is on the classpath.
 */
final class LettuceAsync {

	private LettuceAsync() {
	}

	/**
	 * The native commands of the factory's shared connection, to use directly for as long as they are open, or
	 * {@code null} when the factory is not Lettuce or does not share its connection.
	 */
	static Object sharedCommands(RedisConnectionFactory factory) {
		if (!(factory instanceof LettuceConnectionFactory lettuce) || !lettuce.getShareNativeConnection()) {
			return null;
		}
		try (RedisConnection connection = factory.getConnection()) {
			Object commands = connection.getNativeConnection();
			return (commands instanceof RedisAsyncCommands<?, ?> || commands instanceof RedisAdvancedClusterAsyncCommands<?, ?>)
					? commands : null;
		}
	}

	/**
	 * Asks the factory's Redis Cluster client to read the cluster's topology again, in the background.
	 * @return {@code false} when the factory has no Lettuce cluster client
	 */
	static boolean refreshTopology(RedisConnectionFactory factory) {
		if (factory instanceof LettuceConnectionFactory lettuce
				&& lettuce.getNativeClient() instanceof io.lettuce.core.cluster.RedisClusterClient cluster) {
			cluster.refreshPartitionsAsync();
			return true;
		}
		return false;
	}

	/**
	 * Whether native commands returned by {@link #sharedCommands} can still be used: their connection is open (it
	 * stays open while Lettuce reconnects; the factory closes it when it resets or stops).
	 */
	static boolean isOpen(Object commands) {
		if (commands instanceof RedisAsyncCommands<?, ?> standalone) {
			return standalone.getStatefulConnection().isOpen();
		}
		return ((RedisAdvancedClusterAsyncCommands<?, ?>) commands).getStatefulConnection().isOpen();
	}

	/**
	 * Whether the current thread is one of Netty's (Lettuce's event loops are, with its default thread factory): a
	 * command it sends may be written at once, ahead of commands other threads handed the connection before. A
	 * {@code ClientResources} whose event loops run on plain threads escapes this test; the lanes still send nothing on
	 * a reply while other batches are in flight, so only a caller whose code runs on the event loop could overtake.
	 */
	static boolean onEventLoop() {
		return Thread.currentThread() instanceof FastThreadLocalThread;
	}

	/**
	 * The Netty event loop running the current thread, or {@code null} on any other thread (or a Netty without
	 * {@code ThreadExecutorMap}, public since 4.1.44 though in an internal package).
	 */
	static Executor currentEventLoop() {
		try {
			return ThreadExecutorMap.currentExecutor();
		}
		catch (LinkageError ex) {
			return null;
		}
	}

	/**
	 * The native commands behind a Spring Data connection.
	 * @return the commands, or {@code null} when the connection is not a Lettuce one
	 */
	static Object commands(RedisConnection connection) {
		Object commands = connection.getNativeConnection();
		return (commands instanceof RedisClusterAsyncCommands<?, ?>) ? commands : null;
	}

	/**
	 * Sends the script, reloading it on {@code NOSCRIPT}.
	 * @param commands native commands, from {@link #sharedCommands} or {@link #commands}
	 */
	@SuppressWarnings("unchecked")
	static CompletionStage<List<Object>> evalSha(Object commands, LimiterScript script, byte[][] keys, byte[][] args) {
		RedisClusterAsyncCommands<byte[], byte[]> bytes = (RedisClusterAsyncCommands<byte[], byte[]>) commands;
		ScriptOutputType output = script.repliesWithText() ? ScriptOutputType.VALUE : ScriptOutputType.MULTI;
		CompletableFuture<Object> reply = bytes.evalsha(script.sha(), output, keys, args).toCompletableFuture();
		return reply.exceptionallyCompose(failure -> {
			if (!LimiterScript.isNoScript(failure)) {
				return CompletableFuture.failedStage(failure);
			}
			return bytes.eval(script.source().getBytes(StandardCharsets.UTF_8), output, keys, args);
		}).thenApply(script::reply);
	}

}
