package io.github.limiter.backend;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

import io.github.limiter.testsupport.LoadWorker;
import io.github.limiter.testsupport.RedisProcess;
import io.github.limiter.testsupport.TestRedis;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Four JVM processes × 8 threads, 10^6 decisions on a hot key and 500 warm keys, one process's wall clock 5 s ahead
 * and another's 5 s behind ({@code faketime}, when installed): an oracle over the Redis timestamps of the admitted
 * decisions finds zero over-admissions for the exact algorithms, since the time comes from Redis.
 */
class MultiProcessOracleTests {

	private static final int PROCESSES = 4;

	private static final int THREADS = 8;

	private static final int DECISIONS = 1_000_000;

	@Test
	void fourProcessesWithSkewedClocksNeverOverAdmit() throws Exception {
		RedisProcess redis = TestRedis.standalone();
		String prefix = TestRedis.uniquePrefix();
		Path directory = Files.createTempDirectory("limiter-oracle");
		boolean faketime = Files.isExecutable(Path.of("/usr/bin/faketime"));
		List<Process> processes = new ArrayList<>();
		long start = System.nanoTime();
		for (int p = 0; p < PROCESSES; p++) {
			List<String> command = new ArrayList<>();
			if (faketime && p >= 2) {
				command.addAll(List.of("/usr/bin/faketime", "-f", (p == 2) ? "+5s" : "-5s"));
			}
			command.addAll(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-cp",
					System.getProperty("java.class.path"), LoadWorker.class.getName(), Integer.toString(redis.port()), prefix,
					Integer.toString(THREADS), Integer.toString(DECISIONS / PROCESSES / THREADS),
					directory.resolve("admitted-" + p + ".txt").toString()));
			ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true)
				.redirectOutput(directory.resolve("worker-" + p + ".log").toFile());
			builder.environment().put("FAKETIME_DONT_FAKE_MONOTONIC", "1");
			processes.add(builder.start());
		}
		for (int p = 0; p < PROCESSES; p++) {
			assertThat(processes.get(p).waitFor(10, TimeUnit.MINUTES)).isTrue();
			assertThat(processes.get(p).exitValue()).as(Files.readString(directory.resolve("worker-" + p + ".log"))).isZero();
		}
		long seconds = TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - start);

		Map<String, List<Long>> admitted = new HashMap<>();
		for (int p = 0; p < PROCESSES; p++) {
			for (String line : Files.readAllLines(directory.resolve("admitted-" + p + ".txt"))) {
				String[] fields = line.split(" ");
				admitted.computeIfAbsent(fields[0] + ' ' + fields[1], k -> new ArrayList<>()).add(Long.parseLong(fields[2]));
			}
		}
		admitted.values().forEach(times -> times.sort(null));

		List<Long> log = admitted.get("hot-log hot");
		long window = 100_000;
		for (int i = 0; i + 100 < log.size(); i++) {
			assertThat(log.get(i + 100) - log.get(i)).as("101 admissions of the sliding log within one window")
				.isGreaterThanOrEqualTo(window);
		}

		List<Long> bucket = admitted.get("hot-bucket hot");
		double interval = 1_000.0;
		double tolerance = 50 * interval;
		double tat = 0;
		for (long time : bucket) {
			tat = Math.max(tat, time) + interval;
			assertThat(tat - time - tolerance).as("token bucket conformance").isLessThanOrEqualTo(1e-3);
		}

		int warmKeys = 0;
		long warmAdmitted = 0;
		for (Map.Entry<String, List<Long>> entry : admitted.entrySet()) {
			if (!entry.getKey().startsWith("warm ")) {
				continue;
			}
			warmKeys++;
			Map<Long, Integer> perWindow = new HashMap<>();
			for (long time : entry.getValue()) {
				perWindow.merge(time / 100_000, 1, Integer::sum);
				warmAdmitted++;
			}
			perWindow.values().forEach(count -> assertThat(count).as("fixed window count").isLessThanOrEqualTo(5));
		}
		assertThat(warmKeys).isEqualTo(LoadWorker.WARM_KEYS);
		System.out.println(DECISIONS + " decisions by " + PROCESSES + " processes x " + THREADS + " threads in " + seconds
				+ " s" + (faketime ? " (two clocks skewed by +5 s and -5 s)" : " (faketime not installed: no skew)")
				+ ": admitted hot-log " + log.size() + ", hot-bucket " + bucket.size() + ", warm " + warmAdmitted
				+ "; 0 over-admissions");
	}


}
