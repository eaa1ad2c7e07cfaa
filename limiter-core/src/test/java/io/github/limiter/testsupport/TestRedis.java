package io.github.limiter.testsupport;

import java.util.List;
import java.util.UUID;

import redis.embedded.RedisShardedCluster;

/**
 * The Redis servers shared by the tests of one JVM: one standalone server and one three-master cluster, each started
 * on first use and stopped when the JVM exits. Tests isolate themselves with a unique key prefix.
 */
public final class TestRedis {

	private static RedisProcess standalone;

	private static List<Integer> clusterPorts;

	private TestRedis() {
	}

	/**
	 * The standalone server.
	 * @return the server
	 */
	public static synchronized RedisProcess standalone() {
		if (standalone == null) {
			standalone = RedisProcess.start();
		}
		return standalone;
	}

	/**
	 * The ports of a running cluster of three masters and three replicas on loopback, every slot assigned.
	 * @return the six ports, masters first
	 */
	public static synchronized List<Integer> cluster() {
		if (clusterPorts == null) {
			List<Integer> ports = List.of(RedisProcess.freePort(), RedisProcess.freePort(), RedisProcess.freePort(),
					RedisProcess.freePort(), RedisProcess.freePort(), RedisProcess.freePort());
			try {
				RedisShardedCluster cluster = RedisShardedCluster.newRedisCluster()
					.serverPorts(ports)
					.shard("a", 1)
					.shard("b", 1)
					.shard("c", 1)
					.build();
				cluster.start();
				Runtime.getRuntime().addShutdownHook(new Thread(() -> {
					try {
						cluster.stop();
					}
					catch (Exception ex) {
						// the JVM is going away
					}
				}));
			}
			catch (Exception ex) {
				throw new IllegalStateException("cannot start a Redis Cluster on " + ports, ex);
			}
			clusterPorts = ports;
		}
		return clusterPorts;
	}

	/**
	 * A key prefix no other test uses.
	 * @return a prefix ending with a colon
	 */
	public static String uniquePrefix() {
		return "t" + UUID.randomUUID().toString().substring(0, 8) + ":";
	}

}
