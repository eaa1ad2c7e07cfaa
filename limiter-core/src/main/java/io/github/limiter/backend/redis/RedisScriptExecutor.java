package io.github.limiter.backend.redis;

import java.util.List;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;

/**
 * Runs the {@link LimiterScript} on one Redis client: the only thing a client adapter provides.
 *
 * <p>An adapter sends {@code EVALSHA} and, when Redis answers {@code NOSCRIPT}, sends the source with {@code EVAL}
 * (which also caches it on that node), so scripts reload by themselves after a restart, a {@code SCRIPT FLUSH} or a
 * failover. On a Redis Cluster the command goes to the node serving the first key; all keys share its slot.
 */
public interface RedisScriptExecutor {

	/**
	 * Runs the script. Unless {@link #blocksCaller()}, it returns without waiting for anything, a connection included:
	 * the calling thread may be a request's, the client's event loop (the next batch of a lane goes out when a reply
	 * comes in) or the thread that fails the guard's calls past their deadline.
	 * @param script the script
	 * @param keys the keys, all in one cluster slot
	 * @param args the arguments
	 * @return the script's reply: the values of an array, or, for a script that {@linkplain
	 * LimiterScript#repliesWithText() replies with text}, a list of that one text (bytes or a {@code String})
	 */
	CompletionStage<List<Object>> execute(LimiterScript script, List<String> keys, List<String> args);

	/**
	 * Whether the client talks to a Redis Cluster, where one script may only touch keys of one slot.
	 * @return {@code true} for a cluster
	 */
	boolean isCluster();

	/**
	 * Whether {@link #execute} may block the calling thread.
	 * @return {@code false} for clients with an asynchronous API
	 */
	default boolean blocksCaller() {
		return false;
	}

	/**
	 * Whether a script call sent from the current thread now runs in Redis after every call other threads sent
	 * before it, as calls pipelined on one connection do when the connection's own thread writes them all. Only then
	 * does a lane send several script calls at once: its decisions are taken in arrival order, and a client that
	 * spreads calls over a pool of connections, sends them from other threads while it connects, or writes a call
	 * from its own thread at once while calls handed over by other threads still wait for that thread, could let a
	 * later call overtake an earlier one. (One exception no client avoids: when Redis has lost the script, each call
	 * in flight is answered {@code NOSCRIPT} and sent again with its source, on its own reply, so a later call sent
	 * after the first reload can run before an earlier one's reload. It happens once per restart, flush or failover.)
	 * @return {@code true} when calls sent from this thread keep their order
	 */
	default boolean keepsOrder() {
		return false;
	}

	/**
	 * Asked on the thread that has just delivered one of this client's replies: that thread's executor, when it is the
	 * thread that writes this client's calls to its one connection (a Netty event loop) and the client keeps the order
	 * of calls ({@link #keepsOrder()} from other threads); {@code null} otherwise. A lane then takes and sends its
	 * batches there, in tasks of that thread: each task joins the thread's queue behind the calls other threads handed
	 * the client before it was scheduled, so a thread's calls keep their order, whatever else is in flight.
	 * @return the executor of the client's writing thread, or {@code null}
	 */
	default Executor connectionThread() {
		return null;
	}

	/**
	 * Told that a call failed, so that a cluster client whose view of the cluster may be stale (a node removed, a
	 * replica promoted, slots moved while the client's own refresh missed it) can read the topology again. Called on
	 * the thread that saw the failure; it must not block.
	 * @param failure the call's failure
	 */
	default void failed(Throwable failure) {
	}

}
