package io.github.limiter.backend.redis;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import io.github.limiter.Decision;
import io.github.limiter.LimitRequest;
import io.github.limiter.algorithm.FixedWindow;
import io.github.limiter.algorithm.SlidingWindowLog;
import io.github.limiter.algorithm.TokenBucket;
import io.github.limiter.backend.redis.spring.SpringDataRedisScriptExecutor;
import io.github.limiter.spi.BackendException;
import io.github.limiter.testsupport.TestRedis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The one script protocol: a call carries rules (a key with its limit) and decisions over them, and each decision is
 * decided exactly as if it had been sent alone, in order, at the same time, whatever else the call holds.
 */
class ScriptCallTests {

	private static final String TIME = "1700000000000000";

	private static final TokenBucket BUCKET = TokenBucket.of("bucket", 2, Duration.ofMinutes(1));

	private static final FixedWindow WINDOW = FixedWindow.of("window", 1, Duration.ofMinutes(1));

	private static final SlidingWindowLog LOG = SlidingWindowLog.of("log", 2, Duration.ofMinutes(1));

	private static LettuceConnectionFactory connectionFactory;

	private static RedisScriptExecutor redis;

	@BeforeAll
	static void connect() {
		connectionFactory = TestRedis.lettuce();
		redis = new SpringDataRedisScriptExecutor(connectionFactory, Runnable::run);
	}

	@AfterAll
	static void disconnect() {
		connectionFactory.destroy();
	}

	/** One step of the sequence: a decision over one or more limits, on keys under a prefix. */
	private record Step(String operation, String token, List<LimitRequest> requests) {

		List<String> keys(String prefix) {
			return this.requests.stream().map(request -> prefix + request.limit().name() + ":" + request.key()).toList();
		}

	}

	private static final List<Step> STEPS = List.of(
			new Step("a", "", List.of(LimitRequest.of(BUCKET, "a"))),
			new Step("a", "", List.of(LimitRequest.of(WINDOW, "b"))),
			new Step("a", "", List.of(LimitRequest.of(BUCKET, "a"))),
			new Step("a", "", List.of(LimitRequest.of(BUCKET, "a"))),
			// All or nothing: the window is spent, so the bucket of "c" gives nothing either.
			new Step("a", "t5", List.of(LimitRequest.of(WINDOW, "b"), LimitRequest.of(BUCKET, "c"))),
			new Step("c", "", List.of(new LimitRequest(BUCKET, "c", 2))),
			new Step("a", "t7", List.of(LimitRequest.of(LOG, "d"), LimitRequest.of(BUCKET, "c"))),
			new Step("r", "t8", List.of(LimitRequest.of(LOG, "d"))),
			new Step("a", "t9", List.of(LimitRequest.of(LOG, "d"))),
			new Step("x", "", List.of(LimitRequest.of(BUCKET, "a"))),
			new Step("a", "", List.of(LimitRequest.of(BUCKET, "a"))),
			// A refund gives back to the state this very call wrote, not to what Redis held before it.
			new Step("f" + TIME, "", List.of(LimitRequest.of(WINDOW, "b"))),
			new Step("a", "", List.of(LimitRequest.of(WINDOW, "b"))));

	@Test
	void onlyTheScriptOfACallWithAWarmingBucketDefinesTheWarmup() {
		String definition = "gcra_warm_evaluate = function";
		assertThat(LimiterScript.deciding(List.of(BUCKET, WINDOW)).source()).doesNotContain(definition);
		TokenBucket warming = BUCKET.withWarmup(Duration.ofSeconds(10));
		assertThat(LimiterScript.deciding(List.of(warming, WINDOW)).source())
			.containsSubsequence("local function gcra_ahead", definition, "local now");
	}

	@Test
	void aCallOfSinglePermitAcquiresAndChecksSendsTwoArgumentsPerDecisionToAScriptWithoutTheGeneralOperations() {
		ScriptCall common = new ScriptCall(TIME, 0);
		common.decide("a", "", LimitRequest.of(BUCKET, "a"), "k1");
		common.decide("c", "", LimitRequest.of(WINDOW, "b"), "k2");
		common.decide("a", "", LimitRequest.of(BUCKET, "c"), "k3");
		assertThat(common.arguments()).endsWith("A", "1", "C", "2", "A", "1");
		assertThat(common.script().source()).startsWith("local general = false\n");

		ScriptCall costly = new ScriptCall(TIME, 0);
		costly.decide("a", "", new LimitRequest(BUCKET, "a", 2), "k1");
		assertThat(costly.arguments()).as("a cost above one: the long form").endsWith("a", "", "1", "1", "2");
		assertThat(costly.script()).as("still no general operations")
			.isSameAs(LimiterScript.deciding(LimiterScript.files(BUCKET)));
		assertThat(costly.script().source()).startsWith("local general = false\n");

		ScriptCall recording = new ScriptCall(TIME, 0);
		recording.decide("a", "", LimitRequest.of(BUCKET, "a"), "k1");
		recording.decide("r", "", LimitRequest.of(BUCKET, "b"), "k2");
		assertThat(recording.script()).isSameAs(LimiterScript.deciding(List.of(BUCKET)));
		assertThat(recording.script().source()).startsWith("local general = true\n");
	}

	@Test
	void decisionsOnSeveralKeysAndAlgorithmsInOneCallAreDecidedAsIfEachCameAlone() {
		String together = TestRedis.uniquePrefix();
		ScriptCall call = new ScriptCall(TIME, 0);
		for (Step step : STEPS) {
			call.decide(step.operation(), step.token(), step.requests(), step.keys(together));
		}
		assertThat(call.arguments()).as("each limit is sent once").filteredOn(List.of("gc", "fw", "sl")::contains)
			.containsExactly("gc", "fw", "sl");
		assertThat(call.script()).isSameAs(LimiterScript.deciding(List.of(BUCKET, WINDOW, LOG)));
		List<List<Decision>> inOneCall = call.decode(redis.execute(call.script(), call.keys(), call.arguments())
			.toCompletableFuture()
			.join());

		String alone = TestRedis.uniquePrefix();
		List<List<Decision>> oneByOne = new ArrayList<>();
		for (Step step : STEPS) {
			ScriptCall single = new ScriptCall(TIME, 0);
			single.decide(step.operation(), step.token(), step.requests(), step.keys(alone));
			oneByOne.add(single.decode(redis.execute(single.script(), single.keys(), single.arguments())
				.toCompletableFuture()
				.join()).get(0));
		}

		assertThat(inOneCall).isEqualTo(oneByOne);
		assertThat(allowed(inOneCall)).containsExactly(true, true, true, false, false, true, true, true, false, true,
				true, true, true);
		assertThat(inOneCall.get(3).get(0).retryAfter()).isEqualTo(Duration.ofSeconds(30));
		assertThat(inOneCall.get(4).get(1).remaining()).as("the bucket of c, untouched").isEqualTo(2);
		assertThat(inOneCall.get(6)).extracting(Decision::token).as("the log stored the decision's token")
			.containsExactly("t7", null);
		assertThat(inOneCall.get(6).get(1).remaining()).isEqualTo(1);
		assertThat(inOneCall.get(10).get(0).remaining()).as("after the reset, a full bucket").isEqualTo(1);
	}

	/**
	 * Redis keeps what a failing script wrote, and a failed call answers none of its callers: so a call writes only
	 * after all of its decisions have read, and one that fails on a key of another type (written by some other
	 * program) leaves no permit taken for the callers batched before it, the sliding log's members included.
	 */
	@Test
	void aCallThatFailsOnAKeyOfAnotherTypeLeavesNothingOfTheDecisionsBeforeIt() {
		String prefix = TestRedis.uniquePrefix();
		io.github.limiter.testsupport.RedisProcess server = TestRedis.standalone();
		server.command("HSET", prefix + "foreign", "field", "value");
		ScriptCall call = new ScriptCall("", 0);
		call.decide("a", "t1", LimitRequest.of(LOG, "alice"), prefix + "log:alice");
		call.decide("a", "t2", new LimitRequest(LOG, "bob", 2), prefix + "log:bob");
		call.decide("a", "", LimitRequest.of(BUCKET, "carol"), prefix + "bucket:carol");
		call.decide("a", "", LimitRequest.of(WINDOW, "dave"), prefix + "foreign");
		assertThatThrownBy(() -> redis.execute(call.script(), call.keys(), call.arguments()).toCompletableFuture().join())
			.hasMessageContaining("WRONGTYPE");
		assertThat(server.command("EXISTS", prefix + "log:alice", prefix + "log:bob", prefix + "bucket:carol").trim())
			.as("no key written").isEqualTo(":0");
	}

	/** Acquires on one log in one call count the members admitted before them, which are written at the call's end. */
	@Test
	void acquiresOnOneLogInOneCallCountThePermitsAdmittedBeforeThem() {
		String prefix = TestRedis.uniquePrefix();
		String key = prefix + "log:erin";
		SlidingWindowLog three = SlidingWindowLog.of("three", 3, Duration.ofMinutes(1));
		ScriptCall first = new ScriptCall(TIME, 0);
		first.decide("a", "t1", LimitRequest.of(three, "erin"), key);
		redis.execute(first.script(), first.keys(), first.arguments()).toCompletableFuture().join();
		long later = Long.parseLong(TIME) + 10_000_000;
		ScriptCall call = new ScriptCall(Long.toString(later), 0);
		call.decide("a", "t2", LimitRequest.of(three, "erin"), key);
		call.decide("c", "", LimitRequest.of(three, "erin"), key);
		call.decide("a", "t3", LimitRequest.of(three, "erin"), key);
		call.decide("a", "t4", LimitRequest.of(three, "erin"), key);
		call.decide("a", "t5", new LimitRequest(three, "erin", 2), key);
		List<List<Decision>> decisions = call.decode(
				redis.execute(call.script(), call.keys(), call.arguments()).toCompletableFuture().join());
		assertThat(allowed(decisions)).containsExactly(true, true, true, false, false);
		assertThat(decisions.get(1).get(0).remaining()).as("a check tells what would be left after it").isZero();
		assertThat(decisions.get(1).get(0).resetAfter()).as("the newest permit is this call's").isEqualTo(Duration.ofMinutes(1));
		assertThat(decisions.get(3).get(0).retryAfter()).as("when t1, 10 s older, leaves").isEqualTo(Duration.ofSeconds(50));
		assertThat(decisions.get(4).get(0).retryAfter()).as("two must leave: t1, then the first of this call's")
			.isEqualTo(Duration.ofMinutes(1));
		assertThat(TestRedis.standalone().command("ZCARD", key).trim()).isEqualTo(":3");
	}

	/**
	 * Decisions on one log key in one call leave what they would one after the other: a delete before an acquire leaves
	 * the acquire's member, and of two windows (a retune in flight) the last sets the time to live.
	 */
	@Test
	void aLogWrittenAtTheCallsEndEndsAsTheDecisionsOneAfterTheOtherWouldLeaveIt() {
		String prefix = TestRedis.uniquePrefix();
		io.github.limiter.testsupport.RedisProcess server = TestRedis.standalone();
		SlidingWindowLog hourly = SlidingWindowLog.of("log", 4, Duration.ofHours(1));
		SlidingWindowLog shorter = SlidingWindowLog.of("log", 4, Duration.ofMinutes(2));
		ScriptCall call = new ScriptCall("", 0);
		call.decide("a", "t1", LimitRequest.of(LOG, "fay"), prefix + "log:fay");
		call.decide("x", "", List.of(LimitRequest.of(LOG, "fay")), List.of(prefix + "log:fay"));
		call.decide("a", "t2", LimitRequest.of(LOG, "fay"), prefix + "log:fay");
		call.decide("a", "t3", LimitRequest.of(shorter, "gus"), prefix + "log:gus");
		call.decide("a", "t4", LimitRequest.of(hourly, "gus"), prefix + "log:gus");
		call.decode(redis.execute(call.script(), call.keys(), call.arguments()).toCompletableFuture().join());
		assertThat(server.command("ZRANGE", prefix + "log:fay", "0", "-1")).contains("t2").doesNotContain("t1");
		long ttl = Long.parseLong(server.command("PTTL", prefix + "log:gus").trim().substring(1));
		assertThat(ttl).as("the hourly window's").isGreaterThan(Duration.ofMinutes(59).toMillis());
	}

	@Test
	void aBatchNamesAtMostThreeOfItsKeysSoThatItsErrorsStayOneReadableLine() {
		ScriptCall call = new ScriptCall("", 0);
		for (int i = 0; i < 256; i++) {
			call.decide("a", "", LimitRequest.of(BUCKET, "user-" + i), "k" + i);
		}
		assertThat(call).hasToString("script over 256 keys [k0, k1, k2, ...]");
		assertThatThrownBy(() -> call.decode(List.of("1".getBytes(StandardCharsets.US_ASCII))))
			.isInstanceOf(BackendException.class)
			.hasMessage("unexpected reply from the script over 256 keys [k0, k1, k2, ...]: '1' where 1281 numbers were due");
	}

	@Test
	void theReplyIsOneTextOfIntegersAndAnythingElseIsRefused() {
		assertThat(ScriptCall.numbers("1764000000123456 1 -2 0 9007199254740993", 5))
			.as("times of 16 digits and more, exactly; negative numbers")
			.containsExactly(1764000000123456L, 1, -2, 0, 9007199254740993L);
		assertThat(ScriptCall.numbers("7 1 2".getBytes(StandardCharsets.US_ASCII), 3)).containsExactly(7, 1, 2);
		assertThat(ScriptCall.numbers("7 1 2", 4)).as("too few").isNull();
		assertThat(ScriptCall.numbers("7 1 2 3", 3)).as("too many").isNull();
		assertThat(ScriptCall.numbers("7 1 2 ", 3)).as("a trailing space").isNull();
		assertThat(ScriptCall.numbers("7  1 2", 3)).as("two spaces").isNull();
		assertThat(ScriptCall.numbers("7 1.5 2", 3)).as("a fraction").isNull();
		assertThat(ScriptCall.numbers("7 - 2", 3)).as("a sign alone").isNull();
		assertThat(ScriptCall.numbers("", 1)).isNull();
		assertThat(ScriptCall.numbers(List.of(7L, 1L, 2L), 3)).as("an array, as the script answered before").isNull();
	}

	@Test
	void theScriptAnswersItsDecisionsAsOneTextAndTheOtherScriptsAsArrays() {
		ScriptCall call = new ScriptCall(TIME, 0);
		call.decide("a", "", LimitRequest.of(BUCKET, "a"), TestRedis.uniquePrefix() + "text");
		assertThat(call.script().repliesWithText()).isTrue();
		List<Object> reply = redis.execute(call.script(), call.keys(), call.arguments()).toCompletableFuture().join();
		assertThat(reply).hasSize(1);
		assertThat(new String((byte[]) reply.get(0), StandardCharsets.US_ASCII)).as("the time, then one limit's five")
			.matches(TIME + " 1 \\d+ 0 \\d+ 0");
		assertThat(LimiterScript.instances().repliesWithText()).isFalse();
		assertThat(LimiterScript.overrides().repliesWithText()).isFalse();
	}

	private static List<Boolean> allowed(List<List<Decision>> decisions) {
		return decisions.stream().map(parts -> parts.stream().allMatch(Decision::allowed)).toList();
	}

}
