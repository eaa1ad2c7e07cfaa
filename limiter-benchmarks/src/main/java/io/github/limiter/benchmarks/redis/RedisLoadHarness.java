package io.github.limiter.benchmarks.redis;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicLong;

import org.HdrHistogram.Histogram;

import io.github.limiter.testsupport.RedisProcess;

/**
 * The Redis load harness: starts a {@code redis-server} on 127.0.0.1, runs every {@link Contender} through every
 * workload at every concurrency, in an order rotated from round to round, and reports decisions per second (also as
 * a ratio to the floor of the same round), latency, and per decision Redis commands, Redis CPU (and the part of it
 * spent in scripts) and the CPU of this JVM; then Redis memory per idle limiter.
 *
 * <p>Arguments: {@code --smoke} (a few seconds per contender in all), {@code --warmup=<seconds>},
 * {@code --measure=<seconds>}, {@code --callers=1,8,64}, {@code --workloads=hot,keys,flood}, {@code --keys=10000},
 * {@code --only=<name fragment>,...} (a comma followed by a space is part of a name), {@code --alone} (only the
 * contenders {@code --only} names in full, without the floor unless it is named: one contender alone, for a profiler
 * to watch, as {@code scripts/machine-profile.py} does), {@code --redis-cpus=<cpu list>} (Redis runs on these CPUs
 * and this JVM on the others, by {@code taskset}: Redis with cores of its own, as on a host of its own, instead of
 * sharing every core with the load generator), {@code --out=<markdown file>}. Each measurement announces itself on a
 * line of its own ({@code measuring ...}) when it starts.
 */
public final class RedisLoadHarness {

	private final Duration warmup;

	private final Duration measure;

	private final List<Integer> callers;

	private final List<Workload> workloads;

	private final List<String> only;

	private final boolean alone;

	private final Path out;

	private final int keyCount;

	/** CPUs Redis is pinned to, as {@code taskset} lists them, or {@code null} to share every CPU. */
	private final String redisCpus;

	/** CPUs of the machine, counted before this JVM is pinned to some of them. */
	private final int cpus = Runtime.getRuntime().availableProcessors();

	/** The other CPUs, this JVM's when Redis is pinned. */
	private final String generatorCpus;

	private RedisLoadHarness(Map<String, String> options) {
		boolean smoke = options.containsKey("smoke");
		this.warmup = Duration.ofMillis((long) (1000 * Double.parseDouble(options.getOrDefault("warmup", smoke ? "0.2" : "2"))));
		this.measure = Duration.ofMillis((long) (1000 * Double.parseDouble(options.getOrDefault("measure", smoke ? "0.3" : "5"))));
		this.callers = Arrays.stream(options.getOrDefault("callers", "1,8,64").split(",")).map(Integer::parseInt).toList();
		this.workloads = Arrays.stream(options.getOrDefault("workloads", "hot,keys,flood").split(","))
			.map(name -> Workload.valueOf(name.toUpperCase(Locale.ROOT))).toList();
		// Names are separated by commas; a comma followed by a space belongs to a name ("..., no coalescing/cache").
		this.only = options.containsKey("only") ? List.of(options.get("only").split(",(?! )")) : List.of();
		this.alone = options.containsKey("alone");
		if (this.alone && this.only.isEmpty()) {
			throw new IllegalArgumentException("--alone runs the contenders named by --only, and none was named");
		}
		this.out = Path.of(options.getOrDefault("out", "target/redis-load.md"));
		this.keyCount = Integer.parseInt(options.getOrDefault("keys", smoke ? "1000" : "10000"));
		this.redisCpus = options.get("redis-cpus");
		if (this.redisCpus != null && !this.redisCpus.matches("\\d+(-\\d+)?(,\\d+(-\\d+)?)*")) {
			throw new IllegalArgumentException("--redis-cpus takes a list of CPUs such as 1 or 2-3,6, not '" + this.redisCpus + "'");
		}
		this.generatorCpus = (this.redisCpus != null) ? others(this.redisCpus) : null;
	}

	public static void main(String[] args) throws Exception {
		Map<String, String> options = new LinkedHashMap<>();
		for (String arg : args) {
			if (!arg.startsWith("--")) {
				throw new IllegalArgumentException("unknown argument " + arg + " (expected --name or --name=value)");
			}
			int equals = arg.indexOf('=');
			options.put((equals < 0) ? arg.substring(2) : arg.substring(2, equals), (equals < 0) ? "" : arg.substring(equals + 1));
		}
		int failures;
		try {
			failures = new RedisLoadHarness(options).run();
		}
		catch (RuntimeException ex) {
			// The clients' threads would keep the JVM alive.
			ex.printStackTrace();
			failures = -1;
		}
		System.exit((failures == 0) ? 0 : 1);
	}

	private int run() throws Exception {
		List<Result> results = new ArrayList<>();
		int failures = 0;
		try (RedisProcess redis = RedisProcess.start(); RedisStats stats = new RedisStats(redis.port())) {
			if (this.redisCpus != null) {
				pin(redis.pid(), this.redisCpus);
				pin(ProcessHandle.current().pid(), this.generatorCpus);
			}
			List<Contender> contenders = new ArrayList<>(Contenders.all(redis.port()));
			Contender floor = contenders.get(0);
			if (this.alone) {
				contenders.removeIf(c -> !this.only.contains(c.name()));
				if (contenders.size() != this.only.size()) {
					throw new IllegalArgumentException("--alone needs contenders' full names; of " + this.only + " found only "
							+ contenders.stream().map(Contender::name).toList());
				}
			}
			else {
				contenders.removeIf(c -> c != floor && !this.only.isEmpty() && this.only.stream().noneMatch(c.name()::contains));
			}
			ExecutorService threads = Executors.newCachedThreadPool(runnable -> {
				Thread thread = new Thread(runnable, "caller");
				thread.setDaemon(true);
				return thread;
			});
			System.out.printf("Redis %s on 127.0.0.1:%d; %d contenders, warm-up %s, measure %s%n", stats.version(),
					redis.port(), contenders.size(), this.warmup, this.measure);
			int round = 0;
			for (Workload workload : this.workloads) {
				for (int callerCount : this.callers) {
					int shift = round++ % contenders.size();
					List<Contender> order = new ArrayList<>(contenders);
					java.util.Collections.rotate(order, -shift);
					for (Contender contender : order) {
						try {
							Result result = measure(contender, workload, callerCount, stats, threads);
							results.add(result);
							System.out.println(result.line());
						}
						catch (RuntimeException ex) {
							failures++;
							System.out.printf("%-8s %3d  %-44s FAILED: %s%n", workload.label(), callerCount, contender.name(), ex);
						}
					}
				}
			}
			threads.shutdownNow();
			Map<String, Double> memory = new LinkedHashMap<>();
			for (Contender contender : contenders) {
				try {
					memory.put(contender.name(), idleMemory(contender, stats));
					System.out.printf("memory   %-44s %6.0f B per idle limiter%n", contender.name(), memory.get(contender.name()));
				}
				catch (RuntimeException ex) {
					failures++;
					System.out.printf("memory   %-44s FAILED: %s%n", contender.name(), ex);
				}
			}
			for (Contender contender : contenders) {
				contender.close();
			}
			String report = report(results, memory, stats.version());
			Files.createDirectories(this.out.toAbsolutePath().getParent());
			Files.writeString(this.out, report);
			System.out.println();
			System.out.println(report);
			System.out.println("Written to " + this.out.toAbsolutePath());
		}
		return failures;
	}

	private Result measure(Contender contender, Workload workload, int callerCount, RedisStats stats,
			ExecutorService threads) throws Exception {
		stats.flush();
		contender.prepare(workload.rule());
		KeyStream keys = workload.keys(this.keyCount);
		// Warm-up: every key of the workload is touched at least once (limiters set up, buckets created, floods denied).
		for (String key : keys.all()) {
			contender.decide(key);
		}
		run(contender, keys, callerCount, this.warmup, threads, false);
		System.out.printf("measuring %s, %d callers, %s for %d ms%n", workload.label(), callerCount, contender.name(),
				this.measure.toMillis());
		RedisStats.Snapshot before = stats.snapshot();
		long clientBefore = clientCpuNanos();
		Map<Long, Long> threadsBefore = threadCpuNanos();
		Run run = run(contender, keys, callerCount, this.measure, threads, true);
		Busiest busiest = busiest(threadsBefore, threadCpuNanos());
		long clientCpu = clientCpuNanos() - clientBefore;
		RedisStats.Snapshot after = stats.snapshot();
		return new Result(workload, callerCount, contender.name(), run.decisions, run.allowed, run.nanos,
				run.latency.getValueAtPercentile(50), run.latency.getValueAtPercentile(99),
				after.commands() - before.commands(), after.cpuMicros() - before.cpuMicros(),
				after.scriptMicros() - before.scriptMicros(), clientCpu / 1000, busiest.cpuNanos(), busiest.name());
	}

	/**
	 * Pins every thread of a process to some CPUs ({@code taskset -a -p}); threads it starts later inherit them.
	 * @param pid the process
	 * @param cpus the CPUs, as {@code taskset} lists them
	 */
	private static void pin(long pid, String cpus) throws Exception {
		Process taskset = new ProcessBuilder("taskset", "-a", "-p", "-c", cpus, Long.toString(pid)).redirectErrorStream(true)
			.start();
		String output = new String(taskset.getInputStream().readAllBytes());
		if (taskset.waitFor() != 0) {
			throw new IllegalStateException("taskset -a -p -c " + cpus + " " + pid + " failed: " + output.strip());
		}
	}

	/** The CPUs of the machine not in the list, as {@code taskset} lists them. */
	private String others(String list) {
		boolean[] taken = new boolean[this.cpus];
		for (String range : list.split(",")) {
			String[] ends = range.split("-");
			int first = Integer.parseInt(ends[0]);
			int last = Integer.parseInt(ends[ends.length - 1]);
			for (int cpu = first; cpu <= last; cpu++) {
				if (cpu >= this.cpus) {
					throw new IllegalArgumentException("--redis-cpus names CPU " + cpu + ", but this machine has " + this.cpus);
				}
				taken[cpu] = true;
			}
		}
		List<String> rest = new ArrayList<>();
		for (int cpu = 0; cpu < this.cpus; cpu++) {
			if (!taken[cpu]) {
				rest.add(Integer.toString(cpu));
			}
		}
		if (rest.isEmpty()) {
			throw new IllegalArgumentException("--redis-cpus " + list + " leaves no CPU for the load generator");
		}
		return String.join(",", rest);
	}

	/** CPU time of every live thread of this JVM, by id. */
	private static Map<Long, Long> threadCpuNanos() {
		ThreadMXBean mx = ManagementFactory.getThreadMXBean();
		Map<Long, Long> cpu = new HashMap<>();
		for (long id : mx.getAllThreadIds()) {
			long nanos = mx.getThreadCpuTime(id);
			if (nanos >= 0) {
				cpu.put(id, nanos);
			}
		}
		return cpu;
	}

	/**
	 * The thread of this JVM that used the most CPU between two readings: on a shared connection, the client's I/O
	 * thread, a serial stage that every decision crosses. Near a whole core, it is what limits the rate.
	 */
	private static Busiest busiest(Map<Long, Long> before, Map<Long, Long> after) {
		long most = 0;
		long id = -1;
		for (Map.Entry<Long, Long> thread : after.entrySet()) {
			long used = thread.getValue() - before.getOrDefault(thread.getKey(), 0L);
			if (used > most) {
				most = used;
				id = thread.getKey();
			}
		}
		ThreadInfo info = (id < 0) ? null : ManagementFactory.getThreadMXBean().getThreadInfo(id);
		return new Busiest(most, (info != null) ? info.getThreadName() : "?");
	}

	private record Busiest(long cpuNanos, String name) {
	}

	/**
	 * CPU time of this JVM (every thread: the callers, the clients' I/O threads, the garbage collector, JIT), user +
	 * system: what the contender costs on the application's side, while only it runs.
	 */
	private static long clientCpuNanos() {
		return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean())
			.getProcessCpuTime();
	}

	/**
	 * Redis memory per idle limiter: 1,000 keys such as {@code user-123}, one admitted call each on a limit of 10 per
	 * hour (state that lives on), then the sum of {@code MEMORY USAGE} over every key in Redis.
	 */
	private static double idleMemory(Contender contender, RedisStats stats) {
		stats.flush();
		contender.prepare(new Contender.Rule(10, 3_600_000));
		int limiters = 1000;
		for (int i = 0; i < limiters; i++) {
			if (!contender.decide("user-" + i)) {
				throw new IllegalStateException(contender.name() + " rejected the first call on user-" + i);
			}
		}
		return (double) stats.memoryUsageOfAllKeys() / limiters;
	}

	private static Run run(Contender contender, KeyStream keys, int callerCount, Duration duration,
			ExecutorService threads, boolean record) throws Exception {
		CountDownLatch start = new CountDownLatch(1);
		long[] deadline = new long[1];
		List<Future<Run>> futures = new ArrayList<>();
		for (int i = 0; i < callerCount; i++) {
			futures.add(threads.submit(() -> {
				Run mine = new Run();
				start.await();
				long end = deadline[0];
				while (true) {
					long t0 = System.nanoTime();
					if (t0 >= end) {
						break;
					}
					boolean allowed = contender.decide(keys.next());
					long t1 = System.nanoTime();
					mine.decisions++;
					if (allowed) {
						mine.allowed++;
					}
					if (record) {
						mine.latency.recordValue(Math.max(1, (t1 - t0) / 1000));
					}
				}
				return mine;
			}));
		}
		long begin = System.nanoTime();
		deadline[0] = begin + duration.toNanos();
		start.countDown();
		Run total = new Run();
		for (Future<Run> future : futures) {
			Run one = future.get();
			total.decisions += one.decisions;
			total.allowed += one.allowed;
			total.latency.add(one.latency);
		}
		total.nanos = System.nanoTime() - begin;
		return total;
	}

	private String report(List<Result> results, Map<String, Double> memory, String redisVersion) {
		StringBuilder md = new StringBuilder();
		md.append("Redis load harness, ").append(LocalDate.now()).append(": Redis ").append(redisVersion).append(", ")
			.append(this.cpus).append(" CPUs")
			.append((this.redisCpus != null) ? " (Redis pinned to CPU " + this.redisCpus + ", the load generator to the others)" : "")
			.append(", ")
			.append(System.getProperty("java.vm.name")).append(' ').append(System.getProperty("java.version"))
			.append(", warm-up ").append(this.warmup.toMillis()).append(" ms, measured ").append(this.measure.toMillis())
			.append(" ms per contender and round, contenders in rotated order.\n\n");
		for (Workload workload : this.workloads) {
			md.append("### ").append(workload.title()).append("\n\n");
			md.append("| callers | contender | decisions/s | × floor | allowed | p50 µs | p99 µs | Redis cmds/decision | Redis CPU µs/decision | of which in scripts | client CPU µs/decision | Redis, % of a core | busiest JVM thread, % of a core |\n");
			md.append("|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
			for (int callerCount : this.callers) {
				Result floor = results.stream().filter(r -> r.workload == workload && r.callers == callerCount
						&& r.contender.startsWith("floor")).findFirst().orElse(null);
				results.stream().filter(r -> r.workload == workload && r.callers == callerCount).forEach(r -> {
					md.append(String.format(Locale.ROOT, "| %d | %s | %,.0f | %s | %.1f%% | %d | %d | %.3f | %.2f | %.2f | %.2f | %.0f | %.0f |", r.callers,
							r.contender, r.perSecond(), (floor != null && floor.perSecond() > 0)
									? String.format(Locale.ROOT, "%.2f", r.perSecond() / floor.perSecond()) : "–",
							100.0 * r.allowed / Math.max(1, r.decisions), r.p50, r.p99, r.commandsPerDecision(),
							r.cpuPerDecision(), r.scriptPerDecision(), r.clientPerDecision(), r.redisShare(),
							r.busiestShare())).append('\n');
				});
			}
			md.append('\n');
		}
		md.append("### Redis memory per idle limiter\n\n1,000 keys (`user-0` … `user-999`), one admitted call each on a limit of "
				+ "10 per hour, then the sum of `MEMORY USAGE` over every key, divided by 1,000.\n\n");
		md.append("| contender | bytes per limiter |\n|---|---|\n");
		memory.forEach((name, bytes) -> md.append(String.format(Locale.ROOT, "| %s | %.0f |%n", name, bytes)));
		return md.toString();
	}

	/** The workloads of the issue: one hot key that passes, 10,000 keys round-robin, a flood that is denied. */
	enum Workload {

		HOT("hot key", "One hot key, a limit of 10,000,000 per second: every call passes"),

		KEYS("keys", "Many keys round-robin (10,000 unless --keys says otherwise), 10,000,000 per second each: every call passes"),

		FLOOD("flood", "Flood: 100 keys round-robin, 10 per hour each: over 99% of calls are denied");

		private final String label;

		private final String title;

		Workload(String label, String title) {
			this.label = label;
			this.title = title;
		}

		String label() {
			return this.label;
		}

		String title() {
			return this.title;
		}

		Contender.Rule rule() {
			return (this == FLOOD) ? new Contender.Rule(10, 3_600_000) : new Contender.Rule(10_000_000, 1000);
		}

		KeyStream keys(int keyCount) {
			return switch (this) {
				case HOT -> new KeyStream(List.of("hot"));
				case KEYS -> KeyStream.of("user-", keyCount);
				case FLOOD -> KeyStream.of("attacker-", 100);
			};
		}

	}

	/** Keys handed out round-robin to all callers. */
	static final class KeyStream {

		private final String[] keys;

		private final AtomicLong next = new AtomicLong();

		KeyStream(List<String> keys) {
			this.keys = keys.toArray(String[]::new);
		}

		static KeyStream of(String prefix, int count) {
			List<String> keys = new ArrayList<>(count);
			for (int i = 0; i < count; i++) {
				keys.add(prefix + i);
			}
			return new KeyStream(keys);
		}

		String next() {
			return (this.keys.length == 1) ? this.keys[0] : this.keys[(int) (this.next.getAndIncrement() % this.keys.length)];
		}

		List<String> all() {
			return List.of(this.keys);
		}

	}

	private static final class Run {

		long decisions;

		long allowed;

		long nanos;

		final Histogram latency = new Histogram(3_600_000_000L, 2);

	}

	private record Result(Workload workload, int callers, String contender, long decisions, long allowed, long nanos,
			long p50, long p99, long commands, long cpuMicros, long scriptMicros, long clientMicros,
			long busiestNanos, String busiestThread) {

		double perSecond() {
			return this.decisions * 1e9 / this.nanos;
		}

		double commandsPerDecision() {
			return (double) this.commands / Math.max(1, this.decisions);
		}

		double cpuPerDecision() {
			return (double) this.cpuMicros / Math.max(1, this.decisions);
		}

		double scriptPerDecision() {
			return (double) this.scriptMicros / Math.max(1, this.decisions);
		}

		double clientPerDecision() {
			return (double) this.clientMicros / Math.max(1, this.decisions);
		}

		/** Redis's CPU over the measured period, in percent of one core: 100 is a Redis that never waits. */
		double redisShare() {
			return 100.0 * this.cpuMicros * 1000 / Math.max(1, this.nanos);
		}

		/** The busiest thread of this JVM over the measured period, in percent of one core. */
		double busiestShare() {
			return 100.0 * this.busiestNanos / Math.max(1, this.nanos);
		}

		String line() {
			return String.format(Locale.ROOT, "%-8s %3d  %-44s %,12.0f/s  allowed %5.1f%%  p50 %6d µs  p99 %6d µs  %.3f cmds  %.2f µs CPU (%.2f in scripts), client %.2f µs; Redis %.0f%%, %s %.0f%% of a core",
					this.workload.label(), this.callers, this.contender, perSecond(), 100.0 * this.allowed / Math.max(1, this.decisions),
					this.p50, this.p99, commandsPerDecision(), cpuPerDecision(), scriptPerDecision(), clientPerDecision(),
					redisShare(), this.busiestThread, busiestShare());
		}

	}

	static {
		// Quiet clients: Redisson and Netty log at INFO on every connect.
		System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "warn");
	}

}
