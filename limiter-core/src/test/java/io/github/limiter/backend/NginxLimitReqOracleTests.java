package io.github.limiter.backend;

import java.net.ConnectException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import io.github.limiter.Decision;
import io.github.limiter.Limit;
import io.github.limiter.RateLimiter;
import io.github.limiter.algorithm.LeakyBucket;
import io.github.limiter.backend.local.LocalBackend;
import io.github.limiter.backend.redis.spring.SpringDataRedisScriptExecutor;
import io.github.limiter.testsupport.ManualClock;
import io.github.limiter.testsupport.RedisProcess;
import io.github.limiter.testsupport.TestRedis;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * nginx is the oracle of the leaky bucket: a real nginx ({@code limit_req rate=10r/s burst=5 delay=2}, Debian's
 * {@code nginx-light}, which {@code .ci/run} installs) answers a timed trace of requests, each on its own connection.
 * Its access log says when each request arrived ({@code $msec - $request_time}, nginx's own millisecond clock), what
 * it answered and how long it held the request; the same arrivals, in nginx's order, are then replayed through
 * {@link LeakyBucket#twoStage} on the local backend and on Redis. Burst for burst the answers agree: as many
 * {@code 503}s (rejections), and the {@code 200}s held for the delays the limiter gives. Within a burst the order is
 * left out: requests sent together reach nginx in any order, and the arrival a log line gives ({@code $msec} less
 * {@code $request_time}, each rounded to the millisecond, the second counted from the request's first byte) can put a
 * request nginx decided later a millisecond before one it decided earlier. On a loaded machine a run compared request
 * by request found nginx refusing the request logged at 1,604 ms of the last burst, which the limiter admitted as that
 * burst's sixth: most likely nginx had decided a request logged later first. The trace keeps each burst tens of
 * milliseconds from the previous one's boundary of the rate, so that jitter cannot change a burst's outcome.
 */
class NginxLimitReqOracleTests {

	private static final Path NGINX = Path.of("/usr/sbin/nginx");

	/**
	 * Requests that arrive within this many milliseconds of a burst's first are compared as one burst: how many were
	 * refused, and how long each admitted one was held, whatever their order within it.
	 */
	private static final long BURST_MILLIS = 50;

	/** Milliseconds after the first request at which each request is sent. */
	private static final long[] TRACE = { 0, 0, 0, 0, 0, 0, 0, 0, 250, 250, 250, 700, 700, 1600, 1600, 1600, 1600, 1600,
			1600, 1600 };

	private static Path directory;

	private static Process nginx;

	private static int port;

	@BeforeAll
	static void startNginx() throws Exception {
		Assumptions.assumeTrue(Files.isExecutable(NGINX), "nginx is not installed (.ci/run installs nginx-light)");
		directory = Files.createTempDirectory("limiter-nginx");
		Files.createDirectories(directory.resolve("html"));
		Files.createDirectories(directory.resolve("logs"));
		Files.writeString(directory.resolve("html/index.html"), "ok");
		port = RedisProcess.freePort();
		Files.writeString(directory.resolve("nginx.conf"), """
				daemon off;
				master_process off;
				worker_processes 1;
				error_log %1$s/logs/error.log warn;
				pid %1$s/logs/nginx.pid;
				events { worker_connections 256; }
				http {
				    log_format trace '$arg_i $status $msec $request_time';
				    access_log %1$s/logs/trace.log trace;
				    client_body_temp_path %1$s/logs;
				    proxy_temp_path %1$s/logs;
				    fastcgi_temp_path %1$s/logs;
				    uwsgi_temp_path %1$s/logs;
				    scgi_temp_path %1$s/logs;
				    limit_req_zone $binary_remote_addr zone=trace:1m rate=10r/s;
				    limit_req_status 503;
				    server {
				        listen 127.0.0.1:%2$d;
				        root %1$s/html;
				        location / {
				            limit_req zone=trace burst=5 delay=2;
				        }
				    }
				}
				""".formatted(directory, port));
		nginx = new ProcessBuilder(NGINX.toString(), "-p", directory.toString(), "-c",
				directory.resolve("nginx.conf").toString())
			.redirectErrorStream(true)
			.redirectOutput(directory.resolve("logs/console.log").toFile())
			.start();
		HttpClient client = HttpClient.newHttpClient();
		long giveUp = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
		while (true) {
			try {
				client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/warm-up-" + System.nanoTime()))
					.build(), HttpResponse.BodyHandlers.discarding());
				break;
			}
			catch (ConnectException ex) {
				assertThat(nginx.isAlive()).as(Files.readString(directory.resolve("logs/console.log"))).isTrue();
				assertThat(System.nanoTime()).as("nginx did not start").isLessThan(giveUp);
				Thread.sleep(50);
			}
		}
		// The warm-up took a permit: let the bucket drain before the trace.
		Thread.sleep(1_500);
	}

	@AfterAll
	static void stopNginx() throws InterruptedException {
		if (nginx != null) {
			nginx.destroy();
			nginx.waitFor(10, TimeUnit.SECONDS);
		}
	}

	@Test
	void theLimiterDecidesAndDelaysAsNginxOnTheSameTrace() throws Exception {
		List<Answer> nginxAnswers = replayAgainstNginx();
		LettuceConnectionFactory redis = TestRedis.lettuce();
		try {
			List<Answer> local = replay(nginxAnswers, clock -> LocalBackend.create(clock, 1000));
			List<Answer> scripted = replay(nginxAnswers, clock -> SpringDataRedisScriptExecutor.backend(redis)
				.keyPrefix(TestRedis.uniquePrefix())
				.testClock(clock)
				.build());
			StringBuilder table = new StringBuilder("arrived ms | nginx | held ms | limiter (local) | (redis)\n");
			for (int i = 0; i < nginxAnswers.size(); i++) {
				Answer real = nginxAnswers.get(i);
				table.append(String.format("%10d | %5d | %7d | %s | %s%n", real.arrivedMillis(), real.status(),
						real.heldMillis(), local.get(i), scripted.get(i)));
			}
			System.out.println("nginx limit_req rate=10r/s burst=5 delay=2 against LeakyBucket.twoStage:\n" + table);
			int begin = 0;
			while (begin < nginxAnswers.size()) {
				int end = begin + 1;
				while (end < nginxAnswers.size()
						&& nginxAnswers.get(end).arrivedMillis() - nginxAnswers.get(begin).arrivedMillis() <= BURST_MILLIS) {
					end++;
				}
				List<Answer> real = nginxAnswers.subList(begin, end);
				for (List<Answer> ours : List.of(local.subList(begin, end), scripted.subList(begin, end))) {
					String burst = String.format("the burst of requests %d to %d%n%s", begin + 1, end, table);
					assertThat(rejected(ours)).as(burst).isEqualTo(rejected(real));
					List<Long> realHeld = held(real);
					List<Long> ourDelays = held(ours);
					for (int i = 0; i < realHeld.size(); i++) {
						// nginx holds a request for its delay, in whole milliseconds of its cached clock (later on a busy machine).
						assertThat(realHeld.get(i)).as(burst).isBetween(ourDelays.get(i) - 5, ourDelays.get(i) + 100);
					}
				}
				begin = end;
			}
			assertThat(nginxAnswers).as("the trace exercises every stage").hasSize(TRACE.length)
				.anySatisfy(answer -> assertThat(answer.status()).isEqualTo(503))
				.anySatisfy(answer -> assertThat(answer.heldMillis()).isGreaterThanOrEqualTo(100))
				.anySatisfy(answer -> assertThat(answer.heldMillis()).isLessThan(50));
		}
		finally {
			redis.destroy();
		}
	}

	/**
	 * Sends the trace, each request on its own connection, and reads from nginx's log when each arrived, what it was
	 * answered and how long it was held, in the order nginx decided them.
	 */
	private static List<Answer> replayAgainstNginx() throws Exception {
		HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
		List<CompletableFuture<HttpResponse<Void>>> responses = new ArrayList<>();
		long start = System.nanoTime();
		for (int i = 0; i < TRACE.length; i++) {
			long wait = start + TimeUnit.MILLISECONDS.toNanos(TRACE[i]) - System.nanoTime();
			if (wait > 0) {
				TimeUnit.NANOSECONDS.sleep(wait);
			}
			responses.add(client.sendAsync(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/?i=" + i))
				.timeout(Duration.ofSeconds(10))
				.build(), HttpResponse.BodyHandlers.discarding()));
		}
		for (CompletableFuture<HttpResponse<Void>> response : responses) {
			response.get(30, TimeUnit.SECONDS);
		}
		List<Answer> answers = new ArrayList<>();
		for (String line : Files.readAllLines(directory.resolve("logs/trace.log"))) {
			String[] fields = line.trim().split(" ");
			if (fields.length == 4 && !fields[0].equals("-")) {
				long loggedMillis = Math.round(Double.parseDouble(fields[2]) * 1000);
				long heldMillis = Math.round(Double.parseDouble(fields[3]) * 1000);
				answers.add(new Answer(loggedMillis - heldMillis, Integer.parseInt(fields[1]), heldMillis));
			}
		}
		answers.sort(Comparator.comparingLong(Answer::arrivedMillis)
			.thenComparingInt(Answer::status)
			.thenComparingLong(Answer::heldMillis));
		long first = answers.get(0).arrivedMillis();
		return answers.stream()
			.map(answer -> new Answer(answer.arrivedMillis() - first, answer.status(), answer.heldMillis()))
			.toList();
	}

	private static long rejected(List<Answer> answers) {
		return answers.stream().filter(answer -> answer.status() == 503).count();
	}

	/** How long each admitted request was held, shortest first. */
	private static List<Long> held(List<Answer> answers) {
		return answers.stream().filter(answer -> answer.status() == 200).map(Answer::heldMillis).sorted().toList();
	}

	/** The same arrivals through the limiter, on a clock set to each arrival. */
	private static List<Answer> replay(List<Answer> arrivals,
			java.util.function.Function<ManualClock, io.github.limiter.spi.RateLimiterBackend> backend) {
		Instant origin = Instant.parse("2026-06-15T10:00:00Z");
		ManualClock clock = new ManualClock(origin);
		RateLimiter limiter = RateLimiter.of(backend.apply(clock));
		Limit limit = LeakyBucket.twoStage("nginx-trace", 10, Duration.ofSeconds(1), 5, 2);
		List<Answer> answers = new ArrayList<>();
		for (Answer arrival : arrivals) {
			clock.set(origin.plusMillis(arrival.arrivedMillis()));
			Decision decision = limiter.acquire(limit, "127.0.0.1");
			answers.add(new Answer(arrival.arrivedMillis(), decision.allowed() ? 200 : 503, decision.delay().toMillis()));
		}
		return answers;
	}

	/**
	 * One request of the trace.
	 *
	 * @param arrivedMillis when it arrived, after the first
	 * @param status the answer's status
	 * @param heldMillis how long nginx held it, or the delay the limiter gave
	 */
	record Answer(long arrivedMillis, int status, long heldMillis) {

		@Override
		public String toString() {
			return this.status + " after " + this.heldMillis + " ms";
		}

	}

}
