package io.github.limiter.backend.redis.spring;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import io.github.limiter.Decision;
import io.github.limiter.Limit;
import io.github.limiter.LimitRequest;
import io.github.limiter.Operation;
import io.github.limiter.algorithm.FixedWindow;
import io.github.limiter.algorithm.SlidingWindowLog;
import io.github.limiter.backend.redis.KeyLayout;
import io.github.limiter.backend.redis.LimiterScript;
import io.github.limiter.backend.redis.RedisScriptExecutor;
import io.github.limiter.backend.redis.RedisScriptBackend;
import io.github.limiter.testsupport.RedisProcess;
import io.github.limiter.testsupport.TestRedis;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * While a Redis Cluster slot moves between masters (every slot passes through this during a reshard), a script call
 * over a key that has moved and one that has not is refused with {@code TRYAGAIN}, and Redis runs nothing. A decision
 * over one caller's limits is sent again, every 25 ms for about half a second, so that a slot settling meanwhile
 * costs it nothing; a batch of several callers' keys is sent again key by key at once, each key's call then
 * redirected on its own, so that a slot that takes long to move costs it nothing either.
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

	@Test
	void aBatchOfSeveralCallersRefusedWhileTheirSlotMovesIsDecidedKeyByKey() throws Exception {
		List<Integer> ports = TestRedis.cluster();
		LettuceConnectionFactory factory = TestRedis.lettuceCluster();
		try {
			String prefix = TestRedis.uniquePrefix();
			Recording executor = new Recording(new SpringDataRedisScriptExecutor(factory, Runnable::run));
			RedisScriptBackend backend = RedisScriptBackend.builder(executor).keyPrefix(prefix).build();
			int slot = KeyLayout.slot(backend.layout().key(LimitRequest.of(LOG, "ann")));
			List<String> others = usersOnSlot(backend, slot, 5);
			// Ann's key exists; Bob's, on the same slot, does not yet.
			String bob = others.get(0);
			assertThat(backend.decide(List.of(LimitRequest.of(LOG, "ann")), Operation.ACQUIRE).allowed()).isTrue();
			int source = masterOf(ports, slot);
			int target = ports.stream().filter(port -> port != source && master(port)).findFirst().orElseThrow();
			RedisProcess.command(target, "CLUSTER", "SETSLOT", Integer.toString(slot), "IMPORTING", nodeId(source));
			RedisProcess.command(source, "CLUSTER", "SETSLOT", Integer.toString(slot), "MIGRATING", nodeId(target));
			try {
				// While the source sleeps, four calls fill the slot's lane, so that Ann's and Bob's wait for it together
				// and go to Redis as one batch, which the half-moved slot refuses.
				CompletableFuture<String> asleep = CompletableFuture
					.supplyAsync(() -> RedisProcess.command(source, "DEBUG", "SLEEP", "2"));
				Thread.sleep(300);
				List<CompletableFuture<Decision>> filling = others.subList(1, 5)
					.stream()
					.map(user -> backend.decideAsync(List.of(LimitRequest.of(LOG, user)), Operation.ACQUIRE)
						.toCompletableFuture())
					.toList();
				CompletableFuture<Decision> ann = backend
					.decideAsync(List.of(LimitRequest.of(LOG, "ann")), Operation.ACQUIRE)
					.toCompletableFuture();
				CompletableFuture<Decision> bobs = backend
					.decideAsync(List.of(LimitRequest.of(LOG, bob)), Operation.ACQUIRE)
					.toCompletableFuture();
				asleep.get(30, TimeUnit.SECONDS);
				// Decided while the slot is still half moved: no waiting for it to settle.
				assertThat(ann.get(30, TimeUnit.SECONDS).remaining()).as("charged once, however often it was sent")
					.isEqualTo(98);
				assertThat(bobs.get(30, TimeUnit.SECONDS).remaining()).isEqualTo(99);
				for (CompletableFuture<Decision> other : filling) {
					assertThat(other.get(30, TimeUnit.SECONDS).remaining()).isEqualTo(99);
				}
				assertThat(executor.refusedBatches).as("a batch of several keys was refused, then sent key by key")
					.hasPositiveValue();
			}
			finally {
				RedisProcess.command(target, "CLUSTER", "SETSLOT", Integer.toString(slot), "STABLE");
				RedisProcess.command(source, "CLUSTER", "SETSLOT", Integer.toString(slot), "STABLE");
			}
		}
		finally {
			factory.destroy();
		}
	}

	private static final Limit LOG = SlidingWindowLog.of("log", 100, Duration.ofHours(1));

	/** Callers other than Ann whose keys fall on the slot. */
	private static List<String> usersOnSlot(RedisScriptBackend backend, int slot, int count) {
		List<String> users = new ArrayList<>();
		for (int i = 0; users.size() < count; i++) {
			if (KeyLayout.slot(backend.layout().key(LimitRequest.of(LOG, "u" + i))) == slot) {
				users.add("u" + i);
			}
		}
		return users;
	}

	/** The client, counting the script calls over several keys that Redis refused with {@code TRYAGAIN}. */
	static final class Recording implements RedisScriptExecutor {

		final AtomicInteger refusedBatches = new AtomicInteger();

		private final RedisScriptExecutor client;

		Recording(RedisScriptExecutor client) {
			this.client = client;
		}

		@Override
		public CompletionStage<List<Object>> execute(LimiterScript script, List<String> keys, List<String> args) {
			return this.client.execute(script, keys, args).whenComplete((reply, failure) -> {
				if (failure != null && String.valueOf(failure.getMessage()).contains("TRYAGAIN")
						&& keys.stream().distinct().count() > 1) {
					this.refusedBatches.incrementAndGet();
				}
			});
		}

		@Override
		public boolean isCluster() {
			return this.client.isCluster();
		}

		@Override
		public boolean blocksCaller() {
			return this.client.blocksCaller();
		}

		@Override
		public boolean keepsOrder() {
			return this.client.keepsOrder();
		}

		@Override
		public Executor connectionThread() {
			return this.client.connectionThread();
		}

	}

	static boolean master(int port) {
		return RedisProcess.command(port, "ROLE").contains("master");
	}

	static String nodeId(int port) {
		return RedisProcess.command(port, "CLUSTER", "MYID").split("\r\n")[1];
	}

	/** The port of the master that serves the slot, by its own account. */
	static int masterOf(List<Integer> ports, int slot) {
		for (int port : ports) {
			if (master(port) && ownerSeenBy(port, slot) == port) {
				return port;
			}
		}
		throw new IllegalStateException("no master serves slot " + slot);
	}

	/** The port of the master that serves the slot, as one node sees the cluster, or -1. */
	static int ownerSeenBy(int port, int slot) {
		for (String line : RedisProcess.command(port, "CLUSTER", "NODES").split("\n")) {
			String[] fields = line.trim().split(" ");
			for (int i = 8; i < fields.length; i++) {
				if (fields[i].startsWith("[")) {
					continue;
				}
				String[] range = fields[i].split("-");
				int first = Integer.parseInt(range[0]);
				int last = (range.length > 1) ? Integer.parseInt(range[1]) : first;
				if (slot >= first && slot <= last) {
					String address = fields[1];
					return Integer.parseInt(address.substring(address.indexOf(':') + 1, address.indexOf('@')));
				}
			}
		}
		return -1;
	}

}
