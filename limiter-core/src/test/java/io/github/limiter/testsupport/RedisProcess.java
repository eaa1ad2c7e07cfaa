package io.github.limiter.testsupport;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A {@code redis-server} process on 127.0.0.1 and a free port, started and stopped by the tests.
 *
 * <p>The binary is {@code $LIMITER_REDIS_SERVER} when set, otherwise the Linux x86-64 Redis 6.2 bundled in
 * {@code com.github.codemonstur:embedded-redis}, extracted once per JVM; nothing has to be installed or running.
 */
public final class RedisProcess implements AutoCloseable {

	private static Path binary;

	private final int port;

	private final Process process;

	private final Path directory;

	private RedisProcess(int port, Process process, Path directory) {
		this.port = port;
		this.process = process;
		this.directory = directory;
	}

	/**
	 * Starts a server on a free port.
	 * @param settings extra settings, such as {@code "--cluster-enabled", "yes"}
	 * @return the running server
	 */
	public static RedisProcess start(String... settings) {
		return start(freePort(), settings);
	}

	/**
	 * Starts a server on a given port.
	 * @param port the port
	 * @param settings extra settings
	 * @return the running server
	 */
	public static RedisProcess start(int port, String... settings) {
		try {
			Path directory = Files.createTempDirectory("limiter-redis-" + port + "-");
			List<String> command = new ArrayList<>(List.of(binary().toString(), "--port", Integer.toString(port), "--bind",
					"127.0.0.1", "--save", "", "--appendonly", "no", "--protected-mode", "no", "--daemonize", "no",
					"--dir", directory.toString(), "--logfile", directory.resolve("redis.log").toString()));
			if (majorVersion() >= 7) {
				// Redis 7 refuses DEBUG (the tests' DEBUG SLEEP stalls it) unless allowed, which Redis 6 has no setting for.
				command.addAll(List.of("--enable-debug-command", "local"));
			}
			command.addAll(List.of(settings));
			Process process = new ProcessBuilder(command).redirectErrorStream(true)
				.redirectOutput(directory.resolve("stdout.log").toFile())
				.start();
			RedisProcess redis = new RedisProcess(port, process, directory);
			redis.awaitReady();
			Runtime.getRuntime().addShutdownHook(new Thread(redis::close));
			return redis;
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	/**
	 * The port.
	 * @return the port
	 */
	public int port() {
		return this.port;
	}

	/**
	 * The server's process ID, for signals.
	 * @return the PID
	 */
	public long pid() {
		return this.process.pid();
	}

	/**
	 * Freezes the server ({@code kill -STOP}): connections stay open, nothing answers.
	 */
	public void freeze() {
		signal("STOP");
	}

	/**
	 * Resumes a frozen server ({@code kill -CONT}).
	 */
	public void resume() {
		signal("CONT");
	}

	private void signal(String signal) {
		try {
			Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(pid())).inheritIO().start();
			if (kill.waitFor() != 0) {
				throw new IllegalStateException("kill -" + signal + " " + pid() + " failed");
			}
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

	/**
	 * The URI, for clients.
	 * @return {@code redis://127.0.0.1:<port>}
	 */
	public String uri() {
		return "redis://127.0.0.1:" + this.port;
	}

	/**
	 * Sends one command with the inline protocol and returns the raw reply; for setup and inspection only.
	 * @param arguments the command
	 * @return the reply, as text
	 */
	public String command(String... arguments) {
		return command(this.port, arguments);
	}

	/**
	 * Sends one command to any Redis on loopback and returns the raw reply; for setup and inspection only.
	 * @param port the port
	 * @param arguments the command
	 * @return the reply, as text
	 */
	public static String command(int port, String... arguments) {
		try (Socket socket = new Socket("127.0.0.1", port)) {
			socket.setSoTimeout(5000);
			StringBuilder request = new StringBuilder("*").append(arguments.length).append("\r\n");
			for (String argument : arguments) {
				byte[] bytes = argument.getBytes(StandardCharsets.UTF_8);
				request.append('$').append(bytes.length).append("\r\n").append(argument).append("\r\n");
			}
			OutputStream out = socket.getOutputStream();
			out.write(request.toString().getBytes(StandardCharsets.UTF_8));
			out.flush();
			socket.shutdownOutput();
			return new String(socket.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	private void awaitReady() {
		long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
		while (System.nanoTime() < deadline) {
			if (!this.process.isAlive()) {
				throw new IllegalStateException("redis-server on port " + this.port + " exited: " + log());
			}
			try (Socket socket = new Socket()) {
				socket.connect(new InetSocketAddress("127.0.0.1", this.port), 200);
				if (command("PING").startsWith("+PONG")) {
					return;
				}
			}
			catch (IOException | UncheckedIOException ex) {
				// not listening yet
			}
			sleep(20);
		}
		close();
		throw new IllegalStateException("redis-server on port " + this.port + " did not start: " + log());
	}

	private String log() {
		try {
			Path log = this.directory.resolve("redis.log");
			return Files.exists(log) ? Files.readString(log) : Files.readString(this.directory.resolve("stdout.log"));
		}
		catch (IOException ex) {
			return ex.toString();
		}
	}

	@Override
	public void close() {
		if (this.process.isAlive()) {
			resume();
			this.process.destroy();
			try {
				if (!this.process.waitFor(5, TimeUnit.SECONDS)) {
					this.process.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
				}
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
		}
	}

	/**
	 * A port nobody listens on right now.
	 * @return the port
	 */
	public static int freePort() {
		try (ServerSocket socket = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
			socket.setReuseAddress(true);
			return socket.getLocalPort();
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	/**
	 * Ports for the nodes of a Redis Cluster: distinct (each socket stays open until all are found, so the system
	 * cannot hand out one twice, as separate calls of {@link #freePort()} may), and each with its cluster bus port
	 * (the port + 10,000) a port that exists and that nobody listens on either.
	 * @param count how many
	 * @return the ports
	 */
	public static List<Integer> freeClusterPorts(int count) {
		List<ServerSocket> held = new ArrayList<>();
		List<Integer> ports = new ArrayList<>();
		try {
			while (ports.size() < count) {
				ServerSocket socket = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress());
				held.add(socket);
				int port = socket.getLocalPort();
				if (port + 10_000 <= 65_535 && isFree(port + 10_000)) {
					ports.add(port);
				}
			}
			return List.copyOf(ports);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		finally {
			for (ServerSocket socket : held) {
				try {
					socket.close();
				}
				catch (IOException ex) {
					// nothing was sent on it
				}
			}
		}
	}

	private static boolean isFree(int port) {
		try (ServerSocket socket = new ServerSocket(port, 1, java.net.InetAddress.getLoopbackAddress())) {
			return true;
		}
		catch (IOException ex) {
			return false;
		}
	}

	static void sleep(long millis) {
		try {
			Thread.sleep(millis);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

	/**
	 * The {@code redis-server} binary every test Redis runs, the nodes of a cluster included.
	 * @return the binary
	 * @throws IOException if the bundled binary cannot be extracted
	 */
	static File executable() throws IOException {
		return binary().toFile();
	}

	private static int majorVersion;

	/** The major version of the binary, from {@code redis-server --version} ({@code "Redis server v=7.0.15 ..."}). */
	private static synchronized int majorVersion() throws IOException {
		if (majorVersion == 0) {
			Process version = new ProcessBuilder(binary().toString(), "--version").redirectErrorStream(true).start();
			String out = new String(version.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
			Matcher matcher = Pattern.compile("v=(\\d+)\\.").matcher(out);
			if (!matcher.find()) {
				throw new IllegalStateException(binary() + " --version printed no version: " + out);
			}
			majorVersion = Integer.parseInt(matcher.group(1));
		}
		return majorVersion;
	}

	private static synchronized Path binary() throws IOException {
		if (binary != null) {
			return binary;
		}
		String configured = System.getenv("LIMITER_REDIS_SERVER");
		if (configured != null && !configured.isBlank()) {
			binary = Path.of(configured);
			// Unpacked by Maven (the Redis 7 pass of the build), it has lost its executable bit.
			if (!Files.isExecutable(binary) && !binary.toFile().setExecutable(true)) {
				throw new IllegalStateException("LIMITER_REDIS_SERVER " + binary + " is not executable");
			}
			return binary;
		}
		String arch = System.getProperty("os.arch");
		String resource = (arch.equals("aarch64") || arch.equals("arm64")) ? "redis-server-6.2.7-linux-arm64"
				: "redis-server-6.2.6-v5-linux-amd64";
		if (System.getProperty("os.name").toLowerCase(java.util.Locale.ROOT).contains("mac")) {
			resource = (arch.equals("aarch64")) ? "redis-server-6.2.6-v5-darwin-arm64" : "redis-server-6.2.6-v5-darwin-amd64";
		}
		// A 9 MB copy per test JVM: gone when the JVM exits (the servers it started are stopped by then).
		Path directory = Files.createTempDirectory("limiter-redis-bin-");
		directory.toFile().deleteOnExit();
		Path target = directory.resolve("redis-server");
		target.toFile().deleteOnExit();
		try (InputStream in = RedisProcess.class.getClassLoader().getResourceAsStream(resource)) {
			if (in == null) {
				throw new IllegalStateException("no bundled redis-server " + resource + "; set LIMITER_REDIS_SERVER");
			}
			Files.copy(in, target, StandardCopyOption.REPLACE_EXISTING);
		}
		if (!target.toFile().setExecutable(true)) {
			throw new IllegalStateException("cannot make " + target + " executable");
		}
		binary = target;
		return binary;
	}

}
