package io.github.limiter.guard;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;
import org.springframework.data.redis.connection.RedisClusterConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import io.github.limiter.Decision;
import io.github.limiter.Limit;
import io.github.limiter.LimitRequest;
import io.github.limiter.Operation;
import io.github.limiter.algorithm.TokenBucket;
import io.github.limiter.backend.redis.KeyLayout;
import io.github.limiter.backend.redis.RedisScriptBackend;
import io.github.limiter.backend.redis.spring.SpringDataRedisScriptExecutor;
import io.github.limiter.testsupport.RedisProcess;
import io.github.limiter.testsupport.TestRedis;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code CLUSTER FAILOVER} of the master that owns a hot key, under load: the promoted replica has no script cache,
 * and still no error reaches a caller.
 */
class ClusterFailoverTests {

	@Test
	void aFailoverUnderLoadCausesNoCallerVisibleErrors() throws Exception {
		List<Integer> ports = TestRedis.newCluster();
		LettuceConnectionFactory factory = new LettuceConnectionFactory(
				new RedisClusterConfiguration(ports.stream().map(port -> "127.0.0.1:" + port).toList()));
		factory.afterPropertiesSet();
		factory.start();
		Limit limit = TokenBucket.of("failover", 1_000_000, Duration.ofHours(1));
		RedisScriptBackend backend = SpringDataRedisScriptExecutor.backend(factory, Runnable::run).build();
		GuardedBackend guarded = GuardedBackend.builder(backend)
			.deadline(Duration.ofMillis(200))
			.failurePolicy(requests -> FailurePolicy.OPEN)
			.build();
		backend.decide(List.of(LimitRequest.of(limit, "hot")), Operation.CHECK);
		int slot = KeyLayout.slot(backend.layout().key(LimitRequest.of(limit, "hot")));
		int replica = replicaOf(ports, slot);

		AtomicBoolean running = new AtomicBoolean(true);
		AtomicInteger errors = new AtomicInteger();
		AtomicInteger degraded = new AtomicInteger();
		AtomicInteger decided = new AtomicInteger();
		ExecutorService pool = Executors.newFixedThreadPool(4);
		List<Future<?>> load = new ArrayList<>();
		for (int t = 0; t < 4; t++) {
			load.add(pool.submit(() -> {
				while (running.get()) {
					try {
						Decision decision = guarded.decide(List.of(LimitRequest.of(limit, "hot")), Operation.ACQUIRE);
						decided.incrementAndGet();
						if (!decision.origin().byBackend()) {
							degraded.incrementAndGet();
						}
					}
					catch (RuntimeException ex) {
						errors.incrementAndGet();
					}
				}
			}));
		}
		try {
			Thread.sleep(300);
			assertThat(RedisProcess.command(replica, "CLUSTER", "FAILOVER")).startsWith("+OK");
			long deadline = System.nanoTime() + Duration.ofSeconds(15).toNanos();
			while (!RedisProcess.command(replica, "ROLE").contains("master") && System.nanoTime() < deadline) {
				Thread.sleep(50);
			}
			assertThat(RedisProcess.command(replica, "ROLE")).contains("master");
			Thread.sleep(1000);
			int before = decided.get();
			Thread.sleep(500);
			assertThat(decided.get()).as("decisions go on after the failover").isGreaterThan(before);
		}
		finally {
			running.set(false);
			for (Future<?> future : load) {
				future.get();
			}
			pool.shutdown();
			factory.destroy();
		}
		assertThat(errors.get()).as("errors reaching callers").isZero();
		System.out.println("CLUSTER FAILOVER under load: " + decided.get() + " decisions, " + degraded.get()
				+ " decided by the failure policy, 0 errors");
	}

	/** The port of a replica of the master that serves the slot, read from CLUSTER NODES. */
	private static int replicaOf(List<Integer> ports, int slot) {
		String nodes = RedisProcess.command(ports.get(0), "CLUSTER", "NODES");
		String masterId = null;
		for (String line : nodes.split("\n")) {
			String[] fields = line.trim().split(" ");
			if (fields.length < 9 || !fields[2].contains("master")) {
				continue;
			}
			for (int i = 8; i < fields.length; i++) {
				String[] range = fields[i].split("-");
				int from = Integer.parseInt(range[0]);
				int to = (range.length > 1) ? Integer.parseInt(range[1]) : from;
				if (slot >= from && slot <= to) {
					masterId = fields[0];
				}
			}
		}
		for (String line : nodes.split("\n")) {
			String[] fields = line.trim().split(" ");
			if (fields.length > 3 && fields[2].contains("slave") && fields[3].equals(masterId)) {
				return Integer.parseInt(fields[1].substring(fields[1].indexOf(':') + 1, fields[1].indexOf('@')));
			}
		}
		throw new IllegalStateException("no replica for slot " + slot + " in " + nodes);
	}

}
