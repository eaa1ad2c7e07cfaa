package io.github.limiter.backend.redisson;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

import org.redisson.api.RScript;
import org.redisson.api.RedissonClient;
import org.redisson.client.codec.StringCodec;

import io.github.limiter.backend.redis.LimiterScript;
import io.github.limiter.backend.redis.RedisScriptExecutor;

/**
 * Runs the limiter script through Redisson's script API, asynchronously.
 */
public final class RedissonScriptExecutor implements RedisScriptExecutor {

	private final RedissonClient redisson;

	private final RScript script;

	/**
	 * Creates an executor.
	 * @param redisson the Redisson client
	 */
	public RedissonScriptExecutor(RedissonClient redisson) {
		this.redisson = Objects.requireNonNull(redisson, "redisson client must not be null");
		this.script = redisson.getScript(StringCodec.INSTANCE);
	}

	@Override
	public boolean isCluster() {
		return this.redisson.getConfig().isClusterConfig();
	}

	@Override
	public CompletionStage<List<Object>> execute(LimiterScript script, List<String> keys, List<String> args) {
		List<Object> keyObjects = new ArrayList<>(keys);
		Object[] values = args.toArray();
		String routingKey = keys.get(0);
		RScript.ReturnType type = script.repliesWithText() ? RScript.ReturnType.VALUE : RScript.ReturnType.LIST;
		CompletionStage<Object> reply = this.script.evalShaAsync(routingKey, RScript.Mode.READ_WRITE, script.sha(), type,
				keyObjects, values);
		return reply.handle((result, failure) -> {
			if (failure == null) {
				return CompletableFuture.completedStage(result);
			}
			if (!LimiterScript.isNoScript(failure)) {
				return CompletableFuture.failedStage(failure);
			}
			CompletionStage<Object> retry = this.script.evalAsync(routingKey, RScript.Mode.READ_WRITE, script.source(),
					type, keyObjects, values);
			return retry;
		}).thenCompose(stage -> stage).thenApply(script::reply);
	}

}
