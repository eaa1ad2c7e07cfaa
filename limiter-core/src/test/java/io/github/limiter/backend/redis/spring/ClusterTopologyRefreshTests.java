package io.github.limiter.backend.redis.spring;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletionException;

import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.models.partitions.RedisClusterNode;
import org.junit.jupiter.api.Test;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import io.github.limiter.testsupport.RedisProcess;
import io.github.limiter.testsupport.TestRedis;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A cluster client whose view of the cluster went stale without its own refresh noticing (a node removed after a
 * reshard, a replica promoted in place of a master it never connected to) keeps routing calls where they fail. A
 * failed call makes the backend ask the client to read the topology again, at most once a second.
 */
class ClusterTopologyRefreshTests {

	@Test
	void aFailedCallOnAClusterMakesTheClientReadTheTopologyAgain() throws Exception {
		List<Integer> ports = TestRedis.cluster();
		LettuceConnectionFactory factory = TestRedis.lettuceCluster();
		SpringDataRedisScriptExecutor executor = new SpringDataRedisScriptExecutor(factory, Runnable::run);
		RedisClusterClient client = (RedisClusterClient) factory.getNativeClient();
		// A slot that no test writes to: its owner changes, with no keys to move, and the client is not told.
		int slot = 16_000;
		int source = ClusterSlotMigrationTests.masterOf(ports, slot);
		int target = ports.stream()
			.filter(port -> port != source && ClusterSlotMigrationTests.master(port))
			.findFirst()
			.orElseThrow();
		try {
			client.refreshPartitions();
			assertThat(client.getPartitions().getPartitionBySlot(slot).getUri().getPort()).isEqualTo(source);
			move(ports, slot, source, target);
			Thread.sleep(1_100);
			assertThat(client.getPartitions().getPartitionBySlot(slot).getUri().getPort())
				.as("the client's view, stale").isEqualTo(source);
			executor.failed(new IllegalStateException("CLUSTERDOWN Hash slot not served"));
			long giveUp = System.nanoTime() + Duration.ofSeconds(30).toNanos();
			while (owner(client, slot) != target && System.nanoTime() < giveUp) {
				Thread.sleep(20);
			}
			assertThat(owner(client, slot)).as("the client's view, read again").isEqualTo(target);
		}
		finally {
			move(ports, slot, target, source);
			factory.destroy();
		}
	}

	@Test
	void onlyFailuresThatMayComeFromAStaleTopologyAskForARefresh() {
		assertThat(SpringDataRedisScriptExecutor.staleTopology(new IllegalStateException("CLUSTERDOWN Hash slot not served")))
			.isTrue();
		assertThat(SpringDataRedisScriptExecutor.staleTopology(new CompletionException(new java.net.ConnectException(
				"Connection refused")))).isTrue();
		assertThat(SpringDataRedisScriptExecutor.staleTopology(new io.lettuce.core.RedisConnectionException(
				"Unable to connect to 127.0.0.1:7000"))).isTrue();
		// A command's error, and a caller's key that holds the words: nothing about the topology.
		assertThat(SpringDataRedisScriptExecutor.staleTopology(new IllegalStateException(
				"WRONGTYPE Operation against a key holding the wrong kind of value"))).isFalse();
		assertThat(SpringDataRedisScriptExecutor.staleTopology(new io.github.limiter.spi.BackendException(
				"Redis could not decide script over [CLUSTERDOWN]: ERR script failed", null))).isFalse();
	}

	private static int owner(RedisClusterClient client, int slot) {
		RedisClusterNode node = client.getPartitions().getPartitionBySlot(slot);
		return (node != null) ? node.getUri().getPort() : -1;
	}

	/** Moves an empty slot as a reshard does, then waits until every master agrees. */
	private static void move(List<Integer> ports, int slot, int from, int to) throws InterruptedException {
		String s = Integer.toString(slot);
		String fromId = ClusterSlotMigrationTests.nodeId(from);
		String toId = ClusterSlotMigrationTests.nodeId(to);
		RedisProcess.command(to, "CLUSTER", "SETSLOT", s, "IMPORTING", fromId);
		RedisProcess.command(from, "CLUSTER", "SETSLOT", s, "MIGRATING", toId);
		RedisProcess.command(to, "CLUSTER", "SETSLOT", s, "NODE", toId);
		RedisProcess.command(from, "CLUSTER", "SETSLOT", s, "NODE", toId);
		for (int port : ports) {
			if (port != from && port != to && ClusterSlotMigrationTests.master(port)) {
				RedisProcess.command(port, "CLUSTER", "SETSLOT", s, "NODE", toId);
			}
		}
		long giveUp = System.nanoTime() + Duration.ofSeconds(30).toNanos();
		while (System.nanoTime() < giveUp && ports.stream().anyMatch(port -> ClusterSlotMigrationTests.ownerSeenBy(port, slot) != to)) {
			Thread.sleep(20);
		}
	}

}
