package io.github.limiter.backend.redis.spring;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import io.github.limiter.Decision;
import io.github.limiter.Limit;
import io.github.limiter.LimitRequest;
import io.github.limiter.Operation;
import io.github.limiter.algorithm.FixedWindow;
import io.github.limiter.backend.redis.KeyLayout;
import io.github.limiter.backend.redis.RedisScriptBackend;
import io.github.limiter.testsupport.RedisProcess;
import io.github.limiter.testsupport.TestRedis;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * While a Redis Cluster slot moves between masters (every slot passes through this during a reshard), a script call
 * over a key that has moved and one that has not is refused with {@code TRYAGAIN}, and Redis runs nothing: the call
 * is sent again until the slot has settled, instead of failing into the failure policy.
 */
class ClusterSlotMigrationTests {

	private static final Limit PER_MINUTE = FixedWindow.of("per-minute", 100, Duration.ofMinutes(1));

	private static final Limit PER_HOUR = FixedWindow.of("per-hour", 1000, Duration.ofHours(1));

	@Test
	void aDecisionRefusedWhileItsSlotMovesIsSentAgainUntilTheSlotSettles() throws Exception {
		List<Integer> ports = TestRedis.cluster();
		LettuceConnectionFactory factory = TestRedis.lettuceCluster();
		try {
			String prefix = TestRedis.uniquePrefix();
			RedisScriptBackend backend = SpringDataRedisScriptExecutor.backend(factory, Runnable::run)
				.keyPrefix(prefix)
				.build();
			// The user's minute key exists; its hour key, on the same slot (the key's hash tag), does not yet.
			assertThat(backend.decide(List.of(LimitRequest.of(PER_MINUTE, "user")), Operation.ACQUIRE).allowed()).isTrue();
			int slot = KeyLayout.slot(backend.layout().key(LimitRequest.of(PER_MINUTE, "user")));
			int source = masterOf(ports, slot);
			int target = ports.stream().filter(port -> port != source && master(port)).findFirst().orElseThrow();
			String sourceId = nodeId(source);
			String targetId = nodeId(target);
			RedisProcess.command(target, "CLUSTER", "SETSLOT", Integer.toString(slot), "IMPORTING", sourceId);
			RedisProcess.command(source, "CLUSTER", "SETSLOT", Integer.toString(slot), "MIGRATING", targetId);
			CompletableFuture<Decision> decided;
			try {
				decided = backend.decideAsync(List.of(LimitRequest.of(PER_MINUTE, "user"), LimitRequest.of(PER_HOUR, "user")),
						Operation.ACQUIRE).toCompletableFuture();
				Thread.sleep(150);
				assertThat(decided).as("refused with TRYAGAIN while the slot moves, and not yet sent again with success")
					.isNotDone();
			}
			finally {
				// The migration ends with the slot where it was, as an aborted reshard's does.
				assertThat(RedisProcess.command(target, "CLUSTER", "SETSLOT", Integer.toString(slot), "STABLE"))
					.startsWith("+OK");
				assertThat(RedisProcess.command(source, "CLUSTER", "SETSLOT", Integer.toString(slot), "STABLE"))
					.startsWith("+OK");
			}
			Decision decision = decided.get(30, TimeUnit.SECONDS);
			assertThat(decision.allowed()).isTrue();
			assertThat(decision.parts().get(0).remaining()).as("charged once, however often it was sent").isEqualTo(98);
			assertThat(decision.parts().get(1).remaining()).isEqualTo(999);
		}
		finally {
			factory.destroy();
		}
	}

	private static boolean master(int port) {
		return RedisProcess.command(port, "ROLE").contains("master");
	}

	private static String nodeId(int port) {
		return RedisProcess.command(port, "CLUSTER", "MYID").split("\r\n")[1];
	}

	/** The port of the master that serves the slot, from its own CLUSTER NODES line. */
	private static int masterOf(List<Integer> ports, int slot) {
		for (int port : ports) {
			if (!master(port)) {
				continue;
			}
			for (String line : RedisProcess.command(port, "CLUSTER", "NODES").split("\n")) {
				if (!line.contains("myself")) {
					continue;
				}
				String[] fields = line.trim().split(" ");
				for (int i = 8; i < fields.length; i++) {
					if (fields[i].startsWith("[")) {
						continue;
					}
					String[] range = fields[i].split("-");
					int first = Integer.parseInt(range[0]);
					int last = (range.length > 1) ? Integer.parseInt(range[1]) : first;
					if (slot >= first && slot <= last) {
						return port;
					}
				}
			}
		}
		throw new IllegalStateException("no master serves slot " + slot);
	}

}
