package io.github.limiter.backend.redis.spring;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.ReturnType;

import io.github.limiter.backend.redis.ClientErrors;
import io.github.limiter.backend.redis.LimiterScript;
import io.github.limiter.backend.redis.RedisScriptBackend;
import io.github.limiter.backend.redis.RedisScriptExecutor;
import io.github.limiter.spi.BlockingCalls;

/**
 * Runs the limiter script through Spring Data Redis, on any {@link RedisConnectionFactory} (Lettuce or Jedis,
 * standalone, Sentinel or Cluster).
 *
 * <p>On Lettuce, decisions use the native asynchronous connection and block no thread, not even to connect: until a
 * first connection exists, it is opened on a background thread and decisions wait for it asynchronously, so a Redis
 * that is down at startup cannot hold a caller. On Jedis, which has no asynchronous API, decisions run the blocking
 * call on the given executor.
 */
public final class SpringDataRedisScriptExecutor implements RedisScriptExecutor {

	private static final System.Logger logger = System.getLogger(SpringDataRedisScriptExecutor.class.getName());

	private static final boolean LETTUCE_PRESENT = isPresent("io.lettuce.core.RedisFuture");

	/** Where calls that may wait for a connection run: bounded, a call beyond fails into the failure policy. */
	private static final ExecutorService CONNECTOR = BlockingCalls.pool("limiter-redis-connect");

	private final RedisConnectionFactory connectionFactory;

	private final Executor blockingExecutor;

	private final boolean cluster;

	private final AtomicReference<CompletableFuture<Void>> connected = new AtomicReference<>();

	/**
	 * The native commands of the factory's shared Lettuce connection, used directly while open: no Spring Data
	 * connection per call. {@code null} until looked up, or when the factory does not share its connection.
	 */
	private volatile Object shared;

	/**
	 * Creates an executor.
	 * @param connectionFactory the connection factory
	 * @param blockingExecutor where asynchronous decisions run when the client has no asynchronous API
	 */
	public SpringDataRedisScriptExecutor(RedisConnectionFactory connectionFactory, Executor blockingExecutor) {
		this.connectionFactory = Objects.requireNonNull(connectionFactory, "connection factory must not be null");
		this.blockingExecutor = Objects.requireNonNull(blockingExecutor, "executor must not be null");
		this.cluster = clusterAware(connectionFactory);
		if (LETTUCE_PRESENT) {
			// Connect now, in the background, so that the first decisions do not wait for it.
			connect();
		}
	}

	/**
	 * A Redis backend on a started connection factory, reading the time from Redis. With Lettuce no thread waits
	 * for Redis; with Jedis, which blocks, an asynchronous decision runs on the calling thread (wrap the backend in a
	 * {@link io.github.limiter.guard.GuardedBackend}, which calls it on a thread of its own so that its deadline
	 * holds, or pass an executor).
	 * @param connectionFactory the connection factory, started
	 * @return a builder, to set the key prefix and build
	 */
	public static RedisScriptBackend.Builder backend(RedisConnectionFactory connectionFactory) {
		return backend(connectionFactory, Runnable::run);
	}

	/**
	 * A Redis backend on a connection factory, reading the time from Redis.
	 * @param connectionFactory the connection factory
	 * @param blockingExecutor where asynchronous decisions run when the client has no asynchronous API (Jedis);
	 * Lettuce never uses it
	 * @return a builder, to set the key prefix and build
	 */
	public static RedisScriptBackend.Builder backend(RedisConnectionFactory connectionFactory, Executor blockingExecutor) {
		return RedisScriptBackend.builder(new SpringDataRedisScriptExecutor(connectionFactory, blockingExecutor));
	}

	@Override
	public boolean isCluster() {
		return this.cluster;
	}

	@Override
	public boolean blocksCaller() {
		return !LETTUCE_PRESENT || !this.connectionFactory.getClass().getName().contains("Lettuce");
	}

	/** Whether the factory is configured for a cluster, read from its configuration: no connection is opened. */
	private static boolean clusterAware(RedisConnectionFactory factory) {
		for (String method : new String[] { "isClusterAware", "isRedisClusterAware" }) {
			try {
				return (Boolean) factory.getClass().getMethod(method).invoke(factory);
			}
			catch (ReflectiveOperationException | ClassCastException ex) {
				// not this client
			}
		}
		try (RedisConnection connection = factory.getConnection()) {
			return connection instanceof org.springframework.data.redis.connection.RedisClusterConnection;
		}
	}

	@Override
	public CompletionStage<List<Object>> execute(LimiterScript script, List<String> keys, List<String> args) {
		byte[][] encodedKeys = encode(keys);
		byte[][] encodedArgs = encode(args);
		if (!LETTUCE_PRESENT) {
			return blocking(script, encodedKeys, encodedArgs);
		}
		Object commands = this.shared;
		if (commands != null && LettuceAsync.isOpen(commands)) {
			return LettuceAsync.evalSha(commands, script, encodedKeys, encodedArgs);
		}
		// Anything else may wait for a connection: the first one, one from a pool, or the shared one opened again after
		// the factory reset it. Never on the calling thread, which may be a request's, Lettuce's event loop (the next
		// batch goes out when a reply comes in) or the thread that fails the guard's calls past their deadline.
		return connect().thenComposeAsync(done -> executeConnected(script, encodedKeys, encodedArgs), CONNECTOR);
	}

	/**
	 * Once the factory's shared native connection to a standalone Redis is in use and open, and the calling thread is
	 * not one of Netty's: until then, calls may wait for a connection on other threads, or take one each from a pool;
	 * a cluster connection opens the connection to each master when it first needs it, sending the commands that
	 * waited for it in no set order; and Netty writes at once what its event loop sends, ahead of what other threads
	 * handed the connection before.
	 */
	@Override
	public boolean keepsOrder() {
		Object commands = this.shared;
		return commands != null && !this.cluster && LettuceAsync.isOpen(commands) && !LettuceAsync.onEventLoop();
	}

	/**
	 * The shared native connection's event loop, on the thread that delivered a reply: replies of the shared
	 * connection to a standalone Redis come on the loop that writes its commands.
	 */
	@Override
	public Executor connectionThread() {
		Object commands = this.shared;
		return (commands != null && !this.cluster && LettuceAsync.isOpen(commands)) ? LettuceAsync.currentEventLoop() : null;
	}

	/**
	 * On a cluster, asks Lettuce to read the topology again, at most once a second: its own refresh, adaptive by
	 * default in Spring Boot, is triggered by redirections and reconnections only, and one taken while slots moved
	 * can leave it routing calls to a node that no longer serves them ({@code CLUSTERDOWN Hash slot not served} from
	 * a removed node) or to a dead master whose replica took over, for good, unless a periodic refresh is set.
	 */
	@Override
	public void failed(Throwable failure) {
		if (!this.cluster || !LETTUCE_PRESENT || !staleTopology(failure)) {
			return;
		}
		long now = System.nanoTime();
		long last = this.lastRefresh.get();
		if (now - last < REFRESH_INTERVAL_NANOS || !this.lastRefresh.compareAndSet(last, now)) {
			return;
		}
		try {
			if (LettuceAsync.refreshTopology(this.connectionFactory)) {
				logger.log(System.Logger.Level.DEBUG, () -> "Asked the Redis Cluster client to read the topology again "
						+ "after a failed call: " + failure);
			}
		}
		catch (RuntimeException ex) {
			logger.log(System.Logger.Level.DEBUG, () -> "Could not ask the Redis Cluster client for a topology refresh: "
					+ ex);
		}
	}

	/**
	 * Whether a failure may come from a stale view of the cluster: Redis's own {@code CLUSTERDOWN}, {@code MOVED},
	 * {@code ASK} or {@code TRYAGAIN}, or a connection that could not be made or was lost. A command's error (a key of
	 * another type, a script's) or a timeout says nothing of the topology, and refreshing on it every second would
	 * only load the cluster.
	 */
	static boolean staleTopology(Throwable failure) {
		return ClientErrors.any(failure,
				cause -> ClientErrors.replyStartsWith(cause, "CLUSTERDOWN", "MOVED ", "ASK ", "TRYAGAIN ")
						|| cause instanceof java.net.ConnectException
						|| cause instanceof java.nio.channels.ClosedChannelException
						|| cause.getClass().getSimpleName().endsWith("ConnectionException")
						|| cause.getClass().getSimpleName().endsWith("ConnectionFailureException"));
	}

	private static final long REFRESH_INTERVAL_NANOS = TimeUnit.SECONDS.toNanos(1);

	private final AtomicLong lastRefresh = new AtomicLong(System.nanoTime() - REFRESH_INTERVAL_NANOS);

	/** Opens the first connection on a background thread, once at a time; a failed attempt is retried by the next call. */
	private CompletableFuture<Void> connect() {
		while (true) {
			CompletableFuture<Void> current = this.connected.get();
			if (current != null && !current.isCompletedExceptionally()) {
				return current;
			}
			CompletableFuture<Void> attempt = new CompletableFuture<>();
			if (this.connected.compareAndSet(current, attempt)) {
				try {
					CONNECTOR.execute(() -> {
						try (RedisConnection connection = this.connectionFactory.getConnection()) {
							attempt.complete(null);
						}
						catch (RuntimeException ex) {
							attempt.completeExceptionally(ex);
						}
					});
				}
				catch (RejectedExecutionException ex) {
					// Failed, not pending: the next call tries again.
					attempt.completeExceptionally(ex);
				}
				return attempt;
			}
		}
	}

	private CompletionStage<List<Object>> executeConnected(LimiterScript script, byte[][] keys, byte[][] args) {
		Object commands = LettuceAsync.sharedCommands(this.connectionFactory);
		if (commands != null) {
			CompletionStage<List<Object>> reply = LettuceAsync.evalSha(commands, script, keys, args);
			// Only now: a call sent directly on the shared connection must not go out before this one.
			this.shared = commands;
			return reply;
		}
		RedisConnection connection = this.connectionFactory.getConnection();
		CompletionStage<List<Object>> reply;
		try {
			commands = LettuceAsync.commands(connection);
			reply = (commands != null) ? LettuceAsync.evalSha(commands, script, keys, args) : null;
		}
		catch (RuntimeException ex) {
			connection.close();
			throw ex;
		}
		if (reply != null) {
			return reply.whenComplete((result, failure) -> connection.close());
		}
		connection.close();
		return blocking(script, keys, args);
	}

	private CompletionStage<List<Object>> blocking(LimiterScript script, byte[][] keys, byte[][] args) {
		return CompletableFuture.supplyAsync(() -> executeBlocking(script, keys, args), this.blockingExecutor);
	}

	private List<Object> executeBlocking(LimiterScript script, byte[][] keys, byte[][] args) {
		byte[][] keysAndArgs = new byte[keys.length + args.length][];
		System.arraycopy(keys, 0, keysAndArgs, 0, keys.length);
		System.arraycopy(args, 0, keysAndArgs, keys.length, args.length);
		ReturnType type = script.repliesWithText() ? ReturnType.VALUE : ReturnType.MULTI;
		Object reply;
		try (RedisConnection connection = this.connectionFactory.getConnection()) {
			try {
				reply = connection.scriptingCommands().evalSha(script.sha(), type, keys.length, keysAndArgs);
			}
			catch (RuntimeException ex) {
				if (!LimiterScript.isNoScript(ex)) {
					throw ex;
				}
				reply = connection.scriptingCommands().eval(script.source().getBytes(StandardCharsets.UTF_8), type,
						keys.length, keysAndArgs);
			}
		}
		return script.reply(reply);
	}

	private static byte[][] encode(List<String> strings) {
		byte[][] encoded = new byte[strings.size()][];
		for (int i = 0; i < encoded.length; i++) {
			encoded[i] = strings.get(i).getBytes(StandardCharsets.UTF_8);
		}
		return encoded;
	}

	private static boolean isPresent(String className) {
		try {
			Class.forName(className, false, SpringDataRedisScriptExecutor.class.getClassLoader());
			return true;
		}
		catch (ClassNotFoundException | LinkageError ex) {
			return false;
		}
	}

}
