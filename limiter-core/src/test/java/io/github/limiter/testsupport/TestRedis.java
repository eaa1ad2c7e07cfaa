package io.github.limiter.testsupport;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.UUID;

import org.redisson.Redisson;
import org.redisson.api.RedissonClient;
import org.redisson.config.ClusterServersConfig;
import org.redisson.config.Config;
import org.springframework.data.redis.connection.RedisClusterConfiguration;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import redis.embedded.RedisShardedCluster;
import redis.embedded.core.RedisServerBuilder;

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
			clusterPorts = newCluster();
		}
		return clusterPorts;
	}

	/**
	 * Starts a cluster of its own, for a test that changes its topology; stopped when the JVM exits.
	 * @return the six ports
	 */
	public static List<Integer> newCluster() {
		{
			List<Integer> ports = RedisProcess.freeClusterPorts(6);
			try {
				// The binary of every other test Redis (LIMITER_REDIS_SERVER, or the bundled one), linked from a directory
				// of this cluster's own: its nodes work in the binary's directory, and one that found another cluster's
				// dump.rdb there would not join.
				Path directory = Files.createTempDirectory("limiter-redis-cluster-");
				Path binary = Files.createSymbolicLink(directory.resolve("redis-server"),
						RedisProcess.executable().toPath().toAbsolutePath());
				RedisShardedCluster cluster = RedisShardedCluster.newRedisCluster()
					.withServerBuilder(new RedisServerBuilder().executableProvider(binary::toFile))
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
			return ports;
		}
	}

	/**
	 * A key prefix no other test uses.
	 * @return a prefix ending with a colon
	 */
	public static String uniquePrefix() {
		return "t" + UUID.randomUUID().toString().substring(0, 8) + ":";
	}

	/**
	 * A started Lettuce connection factory on the standalone server; the caller destroys it.
	 * @return the factory
	 */
	public static LettuceConnectionFactory lettuce() {
		return started(new LettuceConnectionFactory(new RedisStandaloneConfiguration("127.0.0.1", standalone().port())));
	}

	/**
	 * A started Lettuce connection factory on the cluster; the caller destroys it.
	 * @return the factory
	 */
	public static LettuceConnectionFactory lettuceCluster() {
		return started(new LettuceConnectionFactory(
				new RedisClusterConfiguration(cluster().stream().map(port -> "127.0.0.1:" + port).toList())));
	}

	private static LettuceConnectionFactory started(LettuceConnectionFactory factory) {
		factory.afterPropertiesSet();
		factory.start();
		return factory;
	}

	/**
	 * A Redisson client on the standalone server; the caller shuts it down.
	 * @return the client
	 */
	public static RedissonClient redisson() {
		Config config = new Config();
		config.useSingleServer().setAddress(standalone().uri());
		return Redisson.create(config);
	}

	/**
	 * A Redisson client on the cluster; the caller shuts it down.
	 * @return the client
	 */
	public static RedissonClient redissonCluster() {
		Config config = new Config();
		ClusterServersConfig servers = config.useClusterServers();
		for (Integer port : cluster()) {
			servers.addNodeAddress("redis://127.0.0.1:" + port);
		}
		return Redisson.create(config);
	}

}
