package io.github.limiter.backend;

import java.time.Duration;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneId;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import io.github.limiter.Decision;
import io.github.limiter.Limit;
import io.github.limiter.LimitRequest;
import io.github.limiter.Operation;
import io.github.limiter.RateLimiter;
import io.github.limiter.TimeSource;
import io.github.limiter.algorithm.CalendarUnit;
import io.github.limiter.algorithm.FixedWindow;
import io.github.limiter.algorithm.LeakyBucket;
import io.github.limiter.algorithm.SlidingWindowCounter;
import io.github.limiter.algorithm.SlidingWindowLog;
import io.github.limiter.algorithm.TokenBucket;
import io.github.limiter.spi.RateLimiterBackend;
import io.github.limiter.testsupport.ManualClock;

import com.google.common.util.concurrent.GuavaWarmingLimiter;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The contract every backend fulfils: given a rule and calls at known times, these are admitted, these rejected, and
 * this is what remaining, retry-after and reset-after say. Written once; each backend's test extends it.
 */
public abstract class BackendContractTests {

	/** A second boundary, so that windows of a second or a minute start exactly here. */
	protected static final Instant T0 = Instant.parse("2026-06-15T10:00:00Z");

	private static final ZoneId PARIS = ZoneId.of("Europe/Paris");

	protected ManualClock clock;

	protected RateLimiter limiter;

	/**
	 * Creates the backend under test, on a fresh namespace, deciding at the times of the given clock.
	 * @param clock the clock the backend must use
	 * @return the backend
	 */
	protected abstract RateLimiterBackend createBackend(TimeSource clock);

	@BeforeEach
	void createLimiter() {
		this.clock = new ManualClock(T0);
		this.limiter = RateLimiter.of(createBackend(this.clock));
	}

	private void at(Duration sinceT0) {
		this.clock.set(T0.plus(sinceT0));
	}

	private void at(LocalDateTime local, ZoneId zone) {
		this.clock.set(local.atZone(zone).toInstant());
	}

	private static Duration ms(long millis) {
		return Duration.ofMillis(millis);
	}

	// Fixed window

	@Test
	void fixedWindowAdmitsLimitPerWindowAndTellsWhenTheWindowEnds() {
		Limit limit = FixedWindow.of("fw", 3, Duration.ofSeconds(1));
		at(ms(100));
		assertDecision(this.limiter.acquire(limit, "k"), true, 2, 0, ms(900));
		assertDecision(this.limiter.acquire(limit, "k"), true, 1, 0, ms(900));
		assertDecision(this.limiter.acquire(limit, "k"), true, 0, 0, ms(900));
		assertDecision(this.limiter.acquire(limit, "k"), false, 0, ms(900), ms(900));
		at(ms(999));
		assertDecision(this.limiter.acquire(limit, "k"), false, 0, ms(1), ms(1));
		at(ms(1000));
		assertDecision(this.limiter.acquire(limit, "k"), true, 2, 0, ms(1000));
		assertThat(this.limiter.acquire(limit, "other").remaining()).isEqualTo(2);
	}

	@Test
	void fixedWindowChargesTheCostAndRejectsWhatDoesNotFit() {
		Limit limit = FixedWindow.of("fw-cost", 5, Duration.ofMinutes(1));
		assertDecision(this.limiter.acquire(limit, "k", 3), true, 2, 0, Duration.ofMinutes(1));
		assertDecision(this.limiter.acquire(limit, "k", 3), false, 2, Duration.ofMinutes(1), Duration.ofMinutes(1));
		assertDecision(this.limiter.acquire(limit, "k", 2), true, 0, 0, Duration.ofMinutes(1));
	}

	@Test
	void calendarDayStartsAtLocalMidnight() {
		Limit limit = FixedWindow.ofCalendar("daily", 1, CalendarUnit.DAY, PARIS);
		at(LocalDateTime.parse("2026-06-15T23:59:00"), PARIS);
		assertDecision(this.limiter.acquire(limit, "u"), true, 0, 0, Duration.ofSeconds(60));
		at(LocalDateTime.parse("2026-06-15T23:59:30"), PARIS);
		assertDecision(this.limiter.acquire(limit, "u"), false, 0, Duration.ofSeconds(30), Duration.ofSeconds(30));
		at(LocalDateTime.parse("2026-06-16T00:00:00"), PARIS);
		assertDecision(this.limiter.acquire(limit, "u"), true, 0, 0, Duration.ofHours(24));
	}

	@Test
	void calendarDayFollowsDaylightSavingTime() {
		Limit limit = FixedWindow.ofCalendar("daily-dst", 1, CalendarUnit.DAY, PARIS);
		// Clocks go forward on 2026-03-29 in Paris: that day lasts 23 hours.
		at(LocalDateTime.parse("2026-03-29T00:00:00"), PARIS);
		assertDecision(this.limiter.acquire(limit, "u"), true, 0, 0, Duration.ofHours(23));
	}

	@Test
	void calendarWeekStartsOnItsFirstDay() {
		Limit limit = FixedWindow.builder("weekly").limit(2).calendar(CalendarUnit.WEEK, PARIS).build();
		// 2026-06-17 is a Wednesday; the week started on Monday 2026-06-15 and ends on Monday 2026-06-22.
		at(LocalDateTime.parse("2026-06-17T12:00:00"), PARIS);
		assertDecision(this.limiter.acquire(limit, "u"), true, 1, 0, Duration.ofDays(4).plusHours(12));
	}

	// Sliding window log

	@Test
	void slidingLogAdmitsAtMostLimitInAnyWindow() {
		Limit limit = SlidingWindowLog.of("log", 3, Duration.ofMinutes(1));
		Decision first = this.limiter.acquire(limit, "k");
		assertDecision(first, true, 2, 0, Duration.ofMinutes(1));
		at(Duration.ofSeconds(10));
		assertDecision(this.limiter.acquire(limit, "k"), true, 1, 0, Duration.ofMinutes(1));
		at(Duration.ofSeconds(20));
		assertDecision(this.limiter.acquire(limit, "k"), true, 0, 0, Duration.ofMinutes(1));
		at(Duration.ofSeconds(30));
		assertDecision(this.limiter.acquire(limit, "k"), false, 0, Duration.ofSeconds(30), Duration.ofSeconds(50));
		at(Duration.ofSeconds(60));
		assertDecision(this.limiter.acquire(limit, "k"), true, 0, 0, Duration.ofMinutes(1));
		assertDecision(this.limiter.acquire(limit, "k"), false, 0, Duration.ofSeconds(10), Duration.ofMinutes(1));
	}

	@Test
	void slidingLogGivesEveryCallItsOwnTokenEvenInTheSameMicrosecond() {
		Limit limit = SlidingWindowLog.of("log-same-instant", 3, Duration.ofSeconds(1));
		Set<String> tokens = new HashSet<>();
		for (int i = 0; i < 3; i++) {
			Decision decision = this.limiter.acquire(limit, "k");
			assertThat(decision.allowed()).isTrue();
			tokens.add(decision.token());
		}
		assertThat(tokens).hasSize(3).doesNotContainNull();
		Decision rejected = this.limiter.acquire(limit, "k");
		assertThat(rejected.allowed()).isFalse();
		assertThat(rejected.token()).isNull();
		assertThat(rejected.retryAfter()).isEqualTo(Duration.ofSeconds(1));
	}

	@Test
	void slidingLogChargesTheCost() {
		Limit limit = SlidingWindowLog.of("log-cost", 5, Duration.ofSeconds(10));
		assertDecision(this.limiter.acquire(limit, "k", 2), true, 3, 0, Duration.ofSeconds(10));
		at(Duration.ofSeconds(4));
		assertDecision(this.limiter.acquire(limit, "k", 3), true, 0, 0, Duration.ofSeconds(10));
		at(Duration.ofSeconds(5));
		// Two permits must leave: both of T0 leave at 10 s.
		assertDecision(this.limiter.acquire(limit, "k", 2), false, 0, Duration.ofSeconds(5), Duration.ofSeconds(9));
		// Four must leave: the fourth oldest, of 4 s, leaves at 14 s.
		assertDecision(this.limiter.acquire(limit, "k", 4), false, 0, Duration.ofSeconds(9), Duration.ofSeconds(9));
	}

	// Sliding window counter

	@Test
	void slidingCounterWeighsThePreviousWindow() {
		Limit limit = SlidingWindowCounter.of("counter", 10, Duration.ofSeconds(1));
		at(ms(500));
		for (int i = 9; i >= 0; i--) {
			assertDecision(this.limiter.acquire(limit, "k"), true, i, 0, ms(1500));
		}
		// The current window is full: wait for the next one, until 9 of these 10 have faded out.
		assertDecision(this.limiter.acquire(limit, "k"), false, 0, ms(600), ms(1500));
		at(ms(1100));
		// 10 × 0.9 + 0 + 1 = 10
		assertDecision(this.limiter.acquire(limit, "k"), true, 0, 0, ms(1900));
		// 10 × 0.9 + 1 + 1 > 10 until 10 × (1 − e) + 2 ≤ 10, at e = 0.2
		assertDecision(this.limiter.acquire(limit, "k"), false, 0, ms(100), ms(1900));
		at(ms(1200));
		assertDecision(this.limiter.acquire(limit, "k"), true, 0, 0, ms(1800));
	}

	// Token bucket

	@Test
	void tokenBucketAllowsBurstsUpToCapacityAndRefillsContinuously() {
		Limit limit = TokenBucket.of("bucket", 5, 1, ms(100));
		for (int i = 4; i >= 0; i--) {
			assertDecision(this.limiter.acquire(limit, "k"), true, i, 0, ms(500 - 100 * i));
		}
		assertDecision(this.limiter.acquire(limit, "k"), false, 0, ms(100), ms(500));
		at(ms(250));
		assertDecision(this.limiter.acquire(limit, "k"), true, 1, 0, ms(350));
		assertDecision(this.limiter.acquire(limit, "k"), true, 0, 0, ms(450));
		assertDecision(this.limiter.acquire(limit, "k"), false, 0, ms(50), ms(450));
		at(ms(2000));
		assertDecision(this.limiter.acquire(limit, "k"), true, 4, 0, ms(100));
	}

	@Test
	void tryAcquireTakesWhatAcquireTakesAndAnswersOnlyWhetherItDid() {
		Limit bucket = TokenBucket.of("try-bucket", 3, 1, ms(100));
		assertThat(this.limiter.tryAcquire(bucket, "k", 2)).isTrue();
		assertThat(this.limiter.tryAcquire(bucket, "k", 2)).isFalse();
		assertThat(this.limiter.tryAcquire(bucket, "k")).isTrue();
		assertThat(this.limiter.tryAcquire(bucket, "k")).isFalse();
		assertDecision(this.limiter.check(bucket, "k"), false, 0, ms(100), ms(300));
		at(ms(100));
		assertThat(this.limiter.tryAcquire(bucket, "k")).isTrue();
		assertThat(this.limiter.tryAcquire(bucket, "other")).isTrue();
		Limit log = SlidingWindowLog.of("try-log", 2, Duration.ofSeconds(1));
		assertThat(this.limiter.tryAcquire(log, "k")).isTrue();
		assertThat(this.limiter.tryAcquire(log, "k")).isTrue();
		assertThat(this.limiter.tryAcquire(log, "k")).isFalse();
		assertThat(this.limiter.acquire(log, "k").allowed()).isFalse();
	}

	@Test
	void keysThatDifferOnlyInALoneSurrogateAreKeysOfTheirOwn() {
		Limit one = FixedWindow.of("lone-surrogates", 1, Duration.ofMinutes(1));
		String tail = "x".repeat(100);
		for (String key : List.of("bob\uD800", "bob\uDC00", "bob?", tail + "?", tail + "\uD800")) {
			assertThat(this.limiter.acquire(one, key).allowed()).as("first call on %s", key).isTrue();
		}
	}

	@Test
	void tryAcquireAdmitsNoCallThatWouldWaitItsTurn() {
		Limit queue = LeakyBucket.queueing("try-queue", 10, Duration.ofSeconds(1), 5);
		assertThat(this.limiter.tryAcquire(queue, "k")).isTrue();
		assertThat(this.limiter.tryAcquire(queue, "k")).as("its turn is 100 ms away").isFalse();
		assertThat(this.limiter.tryAcquire(queue, "k")).isFalse();
		assertThat(this.limiter.acquire(queue, "k").delay()).as("the rejected calls took no turn").isEqualTo(ms(100));
		at(ms(200));
		assertThat(this.limiter.tryAcquire(queue, "k")).as("the queue has drained").isTrue();
		Limit twoStage = LeakyBucket.twoStage("try-two-stage", 10, Duration.ofSeconds(1), 5, 2);
		assertThat(this.limiter.tryAcquire(twoStage, "k")).isTrue();
		assertThat(this.limiter.tryAcquire(twoStage, "k")).as("2 in excess are served without delay").isTrue();
		assertThat(this.limiter.tryAcquire(twoStage, "k")).isTrue();
		assertThat(this.limiter.tryAcquire(twoStage, "k")).as("the third in excess would queue").isFalse();
	}

	// Refunds

	@Test
	void aRefundWithTheRequestsOfAnotherLimitIsRefusedAndGivesNothing() {
		Limit mine = FixedWindow.of("refund-mine", 1, Duration.ofMinutes(1));
		Limit other = FixedWindow.of("refund-other", 1, Duration.ofMinutes(1));
		Decision taken = this.limiter.acquire(mine, "k");
		assertThat(this.limiter.acquire(other, "k").allowed()).isTrue();
		assertThatIllegalArgumentException()
			.isThrownBy(() -> this.limiter.refund(List.of(LimitRequest.of(other, "k")), taken))
			.withMessage("request 0 of the refund is of limit 'refund-other' but the decision's part 0 is of limit "
					+ "'refund-mine': give back with the requests the decision was made for, in their order");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> this.limiter.refund(List.of(LimitRequest.of(mine, "k")), null))
			.withMessageContaining("not null");
		assertThat(this.limiter.acquire(other, "k").allowed()).as("nothing was given to the other limit").isFalse();
	}

	@Test
	void aRefundGivesBackWhatAnAdmittedAcquireTookAndNothingMore() {
		List<Limit> limits = List.of(FixedWindow.of("refund-fw", 2, Duration.ofMinutes(1)),
				SlidingWindowLog.of("refund-log", 2, Duration.ofMinutes(1)),
				SlidingWindowCounter.of("refund-sc", 2, Duration.ofMinutes(1)),
				TokenBucket.of("refund-bucket", 2, 1, Duration.ofMinutes(1)),
				LeakyBucket.nodelay("refund-leaky", 1, Duration.ofMinutes(1), 1));
		for (Limit limit : limits) {
			List<LimitRequest> request = List.of(LimitRequest.of(limit, "k"));
			Decision last = null;
			for (Decision decision = this.limiter.acquire(limit, "k"); decision.allowed(); decision = this.limiter
				.acquire(limit, "k")) {
				last = decision;
			}
			assertThat(last).as("%s admits at first", limit.name()).isNotNull();
			this.limiter.refund(request, last);
			assertThat(this.limiter.acquire(limit, "k").allowed()).as("%s: the permit is back", limit.name()).isTrue();
			assertThat(this.limiter.acquire(limit, "k").allowed()).as("%s: one permit, no more", limit.name()).isFalse();
		}
	}

	@Test
	void aRefundAfterItsWindowEndedGivesNothingToTheNextWindow() {
		Limit limit = FixedWindow.of("refund-late", 1, Duration.ofSeconds(1));
		Decision taken = this.limiter.acquire(limit, "k");
		at(Duration.ofSeconds(1));
		assertThat(this.limiter.acquire(limit, "k").allowed()).isTrue();
		this.limiter.refund(List.of(LimitRequest.of(limit, "k")), taken);
		assertThat(this.limiter.acquire(limit, "k").allowed()).as("the permits left with their window").isFalse();
	}

	@Test
	void aBucketGivesBackOnlyWhatHasNotRefilledSinceTheCallWasCharged() {
		Limit limit = TokenBucket.of("refund-refilled", 1, 1, Duration.ofMinutes(1));
		List<LimitRequest> request = List.of(LimitRequest.of(limit, "k"));
		Decision first = this.limiter.acquire(limit, "k");
		at(Duration.ofMinutes(1));
		assertThat(this.limiter.acquire(limit, "k").allowed()).as("the token came back with time").isTrue();
		this.limiter.refund(request, first);
		assertThat(this.limiter.acquire(limit, "k").allowed()).as("the first call's token was no longer held")
			.isFalse();
		at(Duration.ofSeconds(120));
		Decision third = this.limiter.acquire(limit, "k");
		assertThat(third.allowed()).isTrue();
		at(Duration.ofSeconds(150));
		assertThat(this.limiter.acquire(limit, "k").allowed()).isFalse();
		this.limiter.refund(request, third);
		assertThat(this.limiter.acquire(limit, "k").allowed()).as("the half not yet drained is back: a token 30 s early")
			.isTrue();
		assertThat(this.limiter.acquire(limit, "k").allowed()).isFalse();
	}

	@Test
	void aRefundNeverGivesBackTimeAStateThatCameBackToTheSameArrivalTimeHolds() {
		// A bucket's state can return to the arrival time a call left through other calls: W and X at 0, W given back,
		// the bucket empty at 1 s, Y then puts it where X had. X's refund there must not give back Y's time (a review
		// of a refund that trusted the equal state served three calls at 1 s from an empty bucket of two).
		Limit limit = TokenBucket.of("refund-same-state", 2, 1, Duration.ofSeconds(1));
		List<LimitRequest> request = List.of(LimitRequest.of(limit, "k"));
		Decision w = this.limiter.acquire(limit, "k");
		Decision x = this.limiter.acquire(limit, "k");
		this.limiter.refund(request, w);
		at(ms(1000));
		assertThat(this.limiter.acquire(limit, "k").allowed()).isTrue();
		this.limiter.refund(request, x);
		assertThat(this.limiter.acquire(limit, "k").allowed()).isTrue();
		assertThat(this.limiter.acquire(limit, "k").allowed()).as("a third call at 1 s from a bucket of two").isFalse();
		// The same with a call of cost 2 given back half-way, and Y exactly when the state comes back.
		Limit three = TokenBucket.of("refund-same-state-3", 3, 1, Duration.ofSeconds(1));
		at(ms(0));
		Decision big = this.limiter.acquire(three, "k", 2);
		Decision last = this.limiter.acquire(three, "k");
		at(ms(500));
		this.limiter.refund(List.of(new LimitRequest(three, "k", 2)), big);
		at(ms(2000));
		assertThat(this.limiter.acquire(three, "k").allowed()).isTrue();
		this.limiter.refund(List.of(LimitRequest.of(three, "k")), last);
		assertThat(this.limiter.acquire(three, "k").allowed()).isTrue();
		assertThat(this.limiter.acquire(three, "k").allowed()).isTrue();
		assertThat(this.limiter.acquire(three, "k").allowed()).as("a fourth call at 2 s from a bucket of three").isFalse();
	}

	@Test
	void aBucketWhoseCapacityWasLoweredTellsWhenItsDebtAllowsACall() {
		// 8 of 10 taken at 10 per second, then the capacity lowered to 2: 0.8 s owed, more than the new bucket holds. A
		// call passes once at most 0.1 s is owed, in 0.7 s, and each refusal says so (a review saw "retry in 0.1 s"
		// answered again and again, the new capacity's time, until the first admission at 0.7 s).
		Limit before = TokenBucket.of("lowered", 10, 10, Duration.ofSeconds(1));
		Limit after = TokenBucket.of("lowered", 2, 10, Duration.ofSeconds(1));
		at(ms(100));
		assertThat(this.limiter.acquire(before, "k", 8).allowed()).isTrue();
		Decision refused = this.limiter.acquire(after, "k");
		assertThat(refused.allowed()).isFalse();
		assertThat(refused.retryAfter()).isEqualTo(ms(700));
		assertThat(refused.resetAfter()).isEqualTo(ms(800));
		at(ms(799));
		assertThat(this.limiter.acquire(after, "k").retryAfter()).isEqualTo(ms(1));
		at(ms(800));
		assertThat(this.limiter.acquire(after, "k").allowed()).isTrue();
	}

	@Test
	void aRefundAfterAnEarlierRefundNeverServesTwoCallsAtOnce() {
		// One call a minute, three may queue. A refund counts from its decision: a call's place in the queue moves when
		// a call before it gives up, and only the time since the decision is sure to have drained (a review found
		// that counting from the call's first place served Y and Z at the same instant).
		Limit limit = LeakyBucket.queueing("refund-twice", 1, Duration.ofMinutes(1), 3);
		List<LimitRequest> request = List.of(LimitRequest.of(limit, "k"));
		assertThat(this.limiter.acquire(limit, "k").delay()).isZero();
		Decision b = this.limiter.acquire(limit, "k");
		Decision x = this.limiter.acquire(limit, "k");
		assertThat(x.delay()).isEqualTo(Duration.ofMinutes(2));
		at(Duration.ofSeconds(6));
		this.limiter.refund(request, b);
		at(Duration.ofSeconds(90));
		Decision y = this.limiter.acquire(limit, "k");
		this.limiter.refund(request, x);
		Decision z = this.limiter.acquire(limit, "k");
		assertThat(z.delay()).as("Z is served a minute after Y, never with it")
			.isGreaterThanOrEqualTo(y.delay().plus(Duration.ofMinutes(1)));
	}

	@Test
	void aDecisionGivesItsPermitsBackOnceHoweverOftenItIsRefunded() {
		// A review refunded one of three calls three times: a window of 3 then admitted 3 more calls, a bucket 2.
		for (Limit limit : List.of(FixedWindow.of("refund-once-fw", 3, Duration.ofMinutes(10)),
				SlidingWindowCounter.of("refund-once-sc", 3, Duration.ofMinutes(10)),
				TokenBucket.of("refund-once-tb", 3, 3, Duration.ofMinutes(10)),
				SlidingWindowLog.of("refund-once-log", 3, Duration.ofMinutes(10)))) {
			List<LimitRequest> request = List.of(LimitRequest.of(limit, "k"));
			Decision first = this.limiter.acquire(limit, "k");
			this.limiter.acquire(limit, "k");
			this.limiter.acquire(limit, "k");
			this.limiter.refund(request, first);
			this.limiter.refund(request, first);
			this.limiter.refundAsync(request, first).toCompletableFuture().join();
			assertThat(this.limiter.acquire(limit, "k").allowed()).as(limit.name()).isTrue();
			assertThat(this.limiter.acquire(limit, "k").allowed()).as(limit.name() + ": one call given back").isFalse();
		}
	}

	@Test
	void aWarmingBucketGivesBackTheStablePriceAndKeepsTheColdSurcharge() {
		// Cold, the first permit costs 1.5 intervals: a second one does not fit a capacity of 2.
		Limit limit = TokenBucket.builder("refund-warming").capacity(2).refill(1, Duration.ofMinutes(1))
			.warmup(Duration.ofMinutes(1)).build();
		Decision first = this.limiter.acquire(limit, "k");
		assertThat(first.allowed()).isTrue();
		assertThat(this.limiter.acquire(limit, "k").allowed()).isFalse();
		this.limiter.refund(List.of(LimitRequest.of(limit, "k")), first);
		assertThat(this.limiter.acquire(limit, "k").allowed()).as("one interval back, half an interval kept").isTrue();
		assertThat(this.limiter.acquire(limit, "k").allowed()).isFalse();
	}

	@Test
	void aRefundOfACalendarWindowLongEndedGivesNothingAndBreaksNothing() {
		Limit daily = FixedWindow.ofCalendar("refund-daily", 1, CalendarUnit.DAY, PARIS);
		Limit days = FixedWindow.of("refund-days", 1, Duration.ofDays(3));
		LimitRequest[] both = { LimitRequest.of(daily, "u"), LimitRequest.of(days, "u") };
		at(LocalDateTime.parse("2026-06-15T12:00:00"), PARIS);
		Decision taken = this.limiter.acquire(both);
		assertThat(taken.allowed()).isTrue();
		at(LocalDateTime.parse("2026-06-17T12:00:00"), PARIS);
		this.limiter.refund(List.of(both), taken);
		assertThat(this.limiter.acquire(days, "u").allowed()).as("the window of 3 days still held it").isTrue();
		assertThat(this.limiter.acquire(daily, "u").allowed()).isTrue();
		assertThat(this.limiter.acquire(daily, "u").allowed()).as("nothing given to the new day").isFalse();
	}

	@Test
	void aRefundOfSeveralLimitsGivesBackToEachAndOnlyAnAdmittedDecisionHasPermitsToGiveBack() {
		Limit window = FixedWindow.of("refund-a", 1, Duration.ofMinutes(1));
		Limit log = SlidingWindowLog.of("refund-b", 1, Duration.ofMinutes(1));
		LimitRequest[] both = { LimitRequest.of(window, "k"), LimitRequest.of(log, "k") };
		Decision taken = this.limiter.acquire(both);
		assertThat(taken.allowed()).isTrue();
		Decision rejected = this.limiter.acquire(both);
		assertThat(rejected.allowed()).isFalse();
		org.assertj.core.api.Assertions.assertThatIllegalArgumentException()
			.isThrownBy(() -> this.limiter.refund(List.of(both), rejected))
			.withMessageContaining("only an admitted decision took permits to give back");
		this.limiter.refund(List.of(both), taken);
		assertThat(this.limiter.acquire(both).allowed()).isTrue();
		assertThat(this.limiter.acquire(LimitRequest.of(log, "k")).allowed()).isFalse();
	}

	@Test
	void tokenBucketTakesSeveralTokensPerCall() {
		Limit limit = TokenBucket.of("bucket-cost", 5, 1, ms(100));
		assertDecision(this.limiter.acquire(limit, "k", 3), true, 2, 0, ms(300));
		assertDecision(this.limiter.acquire(limit, "k", 3), false, 2, ms(100), ms(300));
	}

	@Test
	void tokenBucketRefillsBelowOneMillisecond() {
		Limit limit = TokenBucket.of("fast", 1, 1000, ms(1));
		assertDecision(this.limiter.acquire(limit, "k"), true, 0, 0, Duration.ofNanos(1000));
		Decision rejected = this.limiter.acquire(limit, "k");
		assertThat(rejected.allowed()).isFalse();
		assertThat(rejected.retryAfterMicros()).isEqualTo(1);
		this.clock.advanceMicros(1);
		assertThat(this.limiter.acquire(limit, "k").allowed()).isTrue();
	}

	@Test
	void tokenBucketHoldsItsRateOverManyCalls() {
		Limit limit = TokenBucket.of("rate", 10, 1000, Duration.ofSeconds(1));
		int admitted = 0;
		for (int i = 0; i < 3000; i++) {
			this.clock.advanceMicros(333);
			if (this.limiter.acquire(limit, "k").allowed()) {
				admitted++;
			}
		}
		// 3000 calls over 0.999 s at 1000 per second, plus the initial burst of 10.
		assertThat(admitted).isBetween(1000, 1009);
	}

	// Token bucket with a warm-up

	private static TokenBucket warming(String name, long capacity) {
		// 10 per second, warming up over 4 s: a cold permit costs up to three intervals, 300 ms.
		return TokenBucket.builder(name).capacity(capacity).refill(10, Duration.ofSeconds(1))
			.warmup(Duration.ofSeconds(4)).build();
	}

	@Test
	void aColdBucketAdmitsAtAThirdOfItsRateAndWarmsUpUnderSteadyDemand() {
		Limit limit = warming("warming", 1);
		// A new key is cold: the first permit costs the stable 100 ms and a surcharge of 195 ms, the area above the
		// stable interval of the first 100 ms of stored idleness (2·0.1·(4 − 0.1)/4 s).
		assertDecision(this.limiter.acquire(limit, "k"), true, 0, 0, ms(295));
		assertDecision(this.limiter.acquire(limit, "k"), false, 0, ms(295), ms(295));
		// Under steady demand the price falls to the stable interval once 2 s of idleness are spent, after 4 s.
		long lastAdmitted = 0;
		long previous = 0;
		for (long t = 1; t <= 6000; t++) {
			at(ms(t));
			if (this.limiter.acquire(limit, "k").allowed()) {
				previous = lastAdmitted;
				lastAdmitted = t;
			}
		}
		assertThat(lastAdmitted - previous).as("interval between admissions once warm").isEqualTo(100);
		// Idle for 4.1 s (1 s cools it to the middle, 2 s more to the top): cold again.
		at(ms(6000 + 4100 + 2000));
		assertDecision(this.limiter.acquire(limit, "k"), true, 0, 0, ms(295));
	}

	@Test
	void aColdBucketLetsAThirdOfItsBurstThroughAndAWarmOneAllOfIt() {
		Limit limit = warming("warming-burst", 30);
		int cold = 0;
		while (this.limiter.acquire(limit, "cold").allowed()) {
			cold++;
		}
		// Admitted while the arrival time is at most 2.9 s ahead; the prices fall from 295 ms by 10 ms a permit: 13.
		assertThat(cold).isEqualTo(13);
		// Warmed by 4 s of steady demand at the rate, then idle for one refill: the whole burst passes.
		for (int i = 0; i < 40; i++) {
			this.clock.advance(ms(100));
			this.limiter.acquire(limit, "warm");
		}
		this.clock.advance(ms(3000));
		int warm = 0;
		while (this.limiter.acquire(limit, "warm").allowed()) {
			warm++;
		}
		assertThat(warm).isEqualTo(30);
	}

	@Test
	void aWarmingBucketRetunedToAnotherRateKeepsItsIdleness() {
		assertThat(this.limiter.acquire(warming("retuned-warm", 1), "k").allowed()).isTrue();
		// Retuned to 7 per second, whose permits are no whole microseconds: the same key, 3.9 s of idleness left.
		Limit sevenPerSecond = TokenBucket.builder("retuned-warm").capacity(1).refill(7, Duration.ofSeconds(1))
			.warmup(Duration.ofSeconds(4)).build();
		at(ms(300));
		assertThat(this.limiter.acquire(sevenPerSecond, "k").allowed()).isTrue();
		// Still cold: about 143 ms for the permit and 261 ms of surcharge, where a warm bucket would ask 143 ms.
		assertThat(this.limiter.acquire(sevenPerSecond, "k").retryAfter()).isBetween(ms(400), ms(410));
	}

	@Test
	void aWarmingBucketOfCapacityOneAdmitsWhatGuavasWarmingRateLimiterAdmits() {
		Limit limit = warming("guava", 1);
		GuavaWarmingLimiter guava = new GuavaWarmingLimiter(10, Duration.ofSeconds(4));
		// Demand at 50 per second for 8 s, a pause of 3 s, 25 per second for 3 s, a pause of 10 s, then 140 per second
		// for 6 s, calls 20, 40 and 7 ms apart, arriving a little late now and then.
		List<long[]> phases = List.of(new long[] { 0, 8_000_000, 20_000 }, new long[] { 11_000_000, 14_000_000, 40_000 },
				new long[] { 24_000_000, 30_000_000, 7_000 });
		long ours = 0;
		long theirs = 0;
		int second = 0;
		for (long[] phase : phases) {
			for (long t = phase[0]; t < phase[1]; t += phase[2]) {
				long arrival = t + ((t / phase[2]) % 7 == 3 ? 1_300 : 0);
				while (arrival >= (second + 1) * 1_000_000L) {
					second++;
					assertThat(ours).as("admitted by %d s, Guava %d", second, theirs).isCloseTo(theirs,
							org.assertj.core.data.Offset.offset(Math.max(1, theirs / 100)));
				}
				at(Duration.ofNanos(arrival * 1000));
				ours += this.limiter.acquire(limit, "k").allowed() ? 1 : 0;
				theirs += guava.tryAcquireAt(arrival) ? 1 : 0;
			}
		}
		assertThat(ours).as("admitted in all, Guava %d", theirs).isCloseTo(theirs,
				org.assertj.core.data.Offset.offset(theirs / 100));
		// Without a warm-up, 10 per second over the 17 s of demand would admit about 170.
		assertThat(theirs).as("Guava's admissions over the trace").isBetween(100L, 130L);
	}

	// Leaky bucket

	@Test
	void leakyBucketQueuesTheBurstWithDelays() {
		Limit limit = LeakyBucket.queueing("queue", 10, Duration.ofSeconds(1), 2);
		assertDecision(this.limiter.acquire(limit, "k"), true, 2, 0, ms(100));
		assertThat(this.limiter.acquire(limit, "k").delay()).isEqualTo(ms(100));
		Decision third = this.limiter.acquire(limit, "k");
		assertThat(third.allowed()).isTrue();
		assertThat(third.delay()).isEqualTo(ms(200));
		assertThat(third.remaining()).isZero();
		assertDecision(this.limiter.acquire(limit, "k"), false, 0, ms(100), ms(300));
		at(ms(100));
		Decision later = this.limiter.acquire(limit, "k");
		assertThat(later.allowed()).isTrue();
		assertThat(later.delay()).isEqualTo(ms(200));
	}

	@Test
	void aQueuedCallWaitsAtMostItsMaxDelayAndARejectionTakesNothing() throws InterruptedException {
		LeakyBucket queue = LeakyBucket.queueing("bounded-queue", 10, Duration.ofSeconds(1), 5);
		Limit bounded = queue.withMaxDelay(ms(150));
		assertThat(bounded.name()).isEqualTo("bounded-queue");
		assertDecision(this.limiter.acquire(bounded, "k"), true, 1, 0, ms(100));
		Decision second = this.limiter.acquire(bounded, "k");
		assertThat(second.allowed()).isTrue();
		assertThat(second.delay()).isEqualTo(ms(100));
		assertThat(second.remaining()).as("no further turn within 150 ms").isZero();
		assertDecision(this.limiter.acquire(bounded, "k"), false, 0, ms(50), ms(200));
		Decision unbounded = this.limiter.acquire(queue, "k");
		assertThat(unbounded.allowed()).as("the bucket's own bound is 500 ms").isTrue();
		assertThat(unbounded.delay()).as("the rejected call took no turn").isEqualTo(ms(200));
		at(ms(150));
		Decision later = this.limiter.acquire(bounded, "k");
		assertThat(later.allowed()).isTrue();
		assertThat(later.delay()).isEqualTo(ms(150));

		for (int i = 0; i < 3; i++) {
			this.limiter.acquire(queue, "k2");
		}
		java.util.concurrent.atomic.AtomicInteger asked = new java.util.concurrent.atomic.AtomicInteger();
		RateLimiter counted = this.limiter.withListener(new io.github.limiter.event.RateLimiterListener() {

			@Override
			public void onDecision(List<LimitRequest> requests, Operation operation, Decision decision, long nanos) {
				asked.incrementAndGet();
			}

		});
		Decision tooFar = counted.acquire(List.of(LimitRequest.of(queue, "k2")), ms(200));
		assertThat(tooFar.allowed()).as("its turn is 300 ms away").isFalse();
		assertThat(tooFar.retryAfter()).as("a call bounded by 200 ms gets in 100 ms from now").isEqualTo(ms(100));
		assertThat(asked.get()).as("rejected at once: waiting brings the turn no closer than the wait left").isOne();
		tooFar = this.limiter.acquire(List.of(LimitRequest.of(queue, "k2")), ms(150));
		assertThat(tooFar.allowed()).isFalse();
		assertThat(tooFar.retryAfter()).isEqualTo(ms(150));
		Decision withinWait = this.limiter.acquire(List.of(LimitRequest.of(queue, "k2")), ms(350));
		assertThat(withinWait.allowed()).isTrue();
		assertThat(withinWait.delay()).isEqualTo(ms(300));
	}

	@Test
	void aTwoStageLeakyBucketServesTheFirstExcessAtOnceAndDelaysTheRest() {
		// nginx "limit_req rate=10r/s burst=5 delay=2": of six requests at once, three go at once (the one within
		// the rate and two excess), three wait 100, 200 and 300 ms; the seventh is beyond the burst.
		Limit limit = LeakyBucket.twoStage("two-stage", 10, Duration.ofSeconds(1), 5, 2);
		long[] delays = new long[6];
		for (int i = 0; i < 6; i++) {
			Decision decision = this.limiter.acquire(limit, "k");
			assertThat(decision.allowed()).as("request %d", i + 1).isTrue();
			delays[i] = decision.delay().toMillis();
		}
		assertThat(delays).containsExactly(0, 0, 0, 100, 200, 300);
		assertDecision(this.limiter.acquire(limit, "k"), false, 0, ms(100), ms(600));
		at(ms(250));
		// 2.5 requests drained: 3.5 ahead of the next, 1.5 beyond the two served at once.
		Decision later = this.limiter.acquire(limit, "k");
		assertThat(later.allowed()).isTrue();
		assertThat(later.delay()).isEqualTo(ms(150));
		// A call that accepts to wait 100 ms at most is turned away, taking nothing.
		assertThat(this.limiter.acquire(((LeakyBucket) limit).withMaxDelay(ms(100)), "k").allowed()).isFalse();
		assertThat(this.limiter.acquire(((LeakyBucket) limit).withMaxDelay(ms(250)), "k").delay()).isEqualTo(ms(250));
	}

	@Test
	void leakyBucketWithNodelayServesTheBurstAtOnce() {
		Limit limit = LeakyBucket.nodelay("nodelay", 10, Duration.ofSeconds(1), 2);
		for (int i = 0; i < 3; i++) {
			Decision decision = this.limiter.acquire(limit, "k");
			assertThat(decision.allowed()).isTrue();
			assertThat(decision.delay()).isZero();
		}
		assertDecision(this.limiter.acquire(limit, "k"), false, 0, ms(100), ms(300));
	}

	@Test
	void leakyBucketWithoutBurstAdmitsOneAtTheRate() {
		Limit limit = LeakyBucket.nodelay("strict", 2, Duration.ofSeconds(1), 0);
		assertThat(this.limiter.acquire(limit, "k").allowed()).isTrue();
		assertDecision(this.limiter.acquire(limit, "k"), false, 0, ms(500), ms(500));
		at(ms(500));
		assertThat(this.limiter.acquire(limit, "k").allowed()).isTrue();
	}

	// Several limits in one decision

	@Test
	void oncePerCalendarDayAndThreeTimesPerSevenDaysAsOneDecision() {
		Limit daily = FixedWindow.ofCalendar("msg-daily", 1, CalendarUnit.DAY, PARIS);
		Limit weekly = SlidingWindowLog.of("msg-weekly", 3, Duration.ofDays(7));
		LimitRequest[] send = { LimitRequest.of(daily, "u1"), LimitRequest.of(weekly, "u1") };
		LocalDateTime day1 = LocalDateTime.parse("2026-06-01T10:00:00");

		at(day1, PARIS);
		assertThat(this.limiter.acquire(send).allowed()).isTrue();
		at(day1.plusHours(1), PARIS);
		Decision sameDay = this.limiter.acquire(send);
		assertThat(sameDay.allowed()).isFalse();
		assertThat(sameDay.limitName()).isEqualTo("msg-daily");
		assertThat(sameDay.retryAfter()).isEqualTo(Duration.ofHours(13));
		assertThat(sameDay.parts().get(1).allowed()).isTrue();
		assertThat(sameDay.parts().get(1).remaining()).as("the weekly limit consumed nothing").isEqualTo(2);

		at(day1.plusDays(1), PARIS);
		assertThat(this.limiter.acquire(send).allowed()).isTrue();
		at(day1.plusDays(2), PARIS);
		assertThat(this.limiter.acquire(send).allowed()).isTrue();
		at(day1.plusDays(3), PARIS);
		Decision fourth = this.limiter.acquire(send);
		assertThat(fourth.allowed()).isFalse();
		assertThat(fourth.limitName()).isEqualTo("msg-weekly");
		assertThat(fourth.retryAfter()).isEqualTo(Duration.ofDays(4));
		assertThat(this.limiter.check(daily, "u1").allowed()).as("the daily limit consumed nothing").isTrue();

		at(day1.plusDays(7), PARIS);
		assertThat(this.limiter.acquire(send).allowed()).isTrue();
	}

	@Test
	void severalLimitsOnDifferentKeysAreAllOrNothing() {
		Limit perUser = FixedWindow.of("per-user", 2, Duration.ofMinutes(1));
		Limit perIp = FixedWindow.of("per-ip", 1, Duration.ofMinutes(1));
		Limit perSku = TokenBucket.of("per-sku", 5, Duration.ofMinutes(1));
		LimitRequest[] call = { LimitRequest.of(perUser, "alice"), LimitRequest.of(perIp, "10.0.0.1"),
				LimitRequest.of(perSku, "sku-42") };
		Decision first = this.limiter.acquire(call);
		assertThat(first.allowed()).isTrue();
		assertThat(first.parts()).hasSize(3);
		assertThat(first.limitName()).isEqualTo("per-ip");
		assertThat(first.remaining()).isZero();

		Decision second = this.limiter.acquire(call);
		assertThat(second.allowed()).isFalse();
		assertThat(second.limitName()).isEqualTo("per-ip");
		assertThat(second.retryAfter()).isEqualTo(Duration.ofMinutes(1));
		assertThat(this.limiter.check(perUser, "alice").remaining()).as("per-user consumed once, then nothing").isZero();
		assertThat(this.limiter.acquire(perUser, "alice").allowed()).isTrue();
		assertThat(this.limiter.acquire(perSku, "sku-42", 4).allowed()).as("per-sku consumed once").isTrue();
	}

	// Check and record (failed logins)

	@Test
	void failedLoginsAreRecordedSeparatelyFromTheCheck() {
		Limit failures = SlidingWindowLog.of("login-failures", 3, Duration.ofMinutes(1));
		assertThat(this.limiter.check(failures, "alice").allowed()).isTrue();
		assertThat(this.limiter.check(failures, "alice").allowed()).as("a check consumes nothing").isTrue();
		assertThat(this.limiter.record(failures, "alice").allowed()).isTrue();
		at(Duration.ofSeconds(10));
		assertThat(this.limiter.record(failures, "alice").allowed()).isTrue();
		at(Duration.ofSeconds(20));
		Decision third = this.limiter.record(failures, "alice");
		assertThat(third.allowed()).as("the third failure is still within the limit").isTrue();
		assertThat(third.remaining()).isZero();
		assertThat(third.retryAfter()).isEqualTo(Duration.ofSeconds(40));

		at(Duration.ofSeconds(30));
		Decision captcha = this.limiter.check(failures, "alice");
		assertThat(captcha.allowed()).isFalse();
		assertThat(captcha.retryAfter()).isEqualTo(Duration.ofSeconds(30));
		assertThat(this.limiter.record(failures, "alice").allowed()).as("a fourth failure is over the limit").isFalse();
		assertThat(this.limiter.check(failures, "bob").allowed()).isTrue();
		at(Duration.ofSeconds(71));
		assertThat(this.limiter.check(failures, "alice").allowed()).isTrue();
	}

	@Test
	void recordSaturatesAtTheLimit() {
		Limit limit = FixedWindow.of("saturate", 2, Duration.ofMinutes(1));
		for (int i = 0; i < 5; i++) {
			this.limiter.record(limit, "k");
		}
		Decision decision = this.limiter.check(limit, "k");
		assertThat(decision.allowed()).isFalse();
		assertThat(decision.remaining()).isZero();
		at(Duration.ofMinutes(1));
		assertThat(this.limiter.acquire(limit, "k").remaining()).isEqualTo(1);
	}

	/**
	 * A record, an admission and a record at one instant, on a log of 2: the second record saturates the log and
	 * drops the admission's entry, not a record's (they sort last at one time on every backend), so the admission's
	 * refund then frees nothing.
	 */
	@Test
	void aRefundAfterRecordsSaturatedTheLogAtOneInstantFreesNothingTheRecordsCounted() {
		Limit log = SlidingWindowLog.of("records-at-one-instant", 2, Duration.ofSeconds(1));
		this.limiter.record(log, "k");
		Decision admitted = this.limiter.acquire(log, "k");
		assertThat(admitted.allowed()).isTrue();
		this.limiter.record(log, "k");
		this.limiter.refund(List.of(LimitRequest.of(log, "k")), admitted);
		assertThat(this.limiter.acquire(log, "k").allowed()).as("the two records alone fill the log").isFalse();
	}

	@Test
	void checkOfSeveralLimitsConsumesNothing() {
		Limit a = TokenBucket.of("check-a", 1, Duration.ofMinutes(1));
		Limit b = SlidingWindowCounter.of("check-b", 1, Duration.ofMinutes(1));
		List<LimitRequest> both = List.of(LimitRequest.of(a, "x"), LimitRequest.of(b, "y"));
		for (int i = 0; i < 3; i++) {
			assertThat(this.limiter.decide(both, Operation.CHECK).allowed()).isTrue();
		}
		assertThat(this.limiter.decide(both, Operation.ACQUIRE).allowed()).isTrue();
		assertThat(this.limiter.decide(both, Operation.CHECK).allowed()).isFalse();
	}

	@Test
	void resetForgetsAKey() {
		Limit limit = SlidingWindowLog.of("reset", 1, Duration.ofHours(1));
		assertThat(this.limiter.acquire(limit, "k").allowed()).isTrue();
		assertThat(this.limiter.acquire(limit, "k").allowed()).isFalse();
		this.limiter.reset(limit, "k");
		assertThat(this.limiter.acquire(limit, "k").allowed()).isTrue();
	}

	@Test
	void limitsWithTheSameKeyButDifferentNamesAreIndependent() {
		Limit a = FixedWindow.of("first", 1, Duration.ofMinutes(1));
		Limit b = FixedWindow.of("second", 1, Duration.ofMinutes(1));
		assertThat(this.limiter.acquire(a, "k").allowed()).isTrue();
		assertThat(this.limiter.acquire(b, "k").allowed()).isTrue();
		assertThat(this.limiter.acquire(a, "k").allowed()).isFalse();
	}

	@Test
	void aLimitSwitchedToAnotherAlgorithmStartsAfresh() {
		Limit before = TokenBucket.of("switched", 1, Duration.ofHours(1));
		Limit after = SlidingWindowLog.of("switched", 2, Duration.ofHours(1));
		assertThat(this.limiter.acquire(before, "k").allowed()).isTrue();
		assertThat(this.limiter.acquire(before, "k").allowed()).isFalse();
		assertThat(this.limiter.acquire(after, "k").remaining()).isEqualTo(1);
		assertThat(this.limiter.acquire(after, "k").allowed()).isTrue();
		assertThat(this.limiter.acquire(after, "k").allowed()).isFalse();
	}

	@Test
	void aWindowMadeLongerOrTurnedIntoAnotherKindOfWindowNeverLocksItsKeysOut() {
		// A window's key holds its window as a number of window lengths (or a calendar period's start): read under
		// another length, it must not become a window centuries ahead, nor an expiry Redis refuses.
		List<List<Limit>> retunings = List.of(
				List.of(FixedWindow.of("stretched", 3, Duration.ofSeconds(1)), FixedWindow.of("stretched", 3, Duration.ofHours(1))),
				List.of(SlidingWindowCounter.of("stretched-sc", 3, Duration.ofSeconds(1)),
						SlidingWindowCounter.of("stretched-sc", 3, Duration.ofHours(1))),
				List.of(FixedWindow.ofCalendar("daily-then-hourly", 3, CalendarUnit.DAY, PARIS),
						FixedWindow.of("daily-then-hourly", 3, Duration.ofHours(1))),
				List.of(FixedWindow.of("hourly-then-daily", 3, Duration.ofHours(1)),
						FixedWindow.ofCalendar("hourly-then-daily", 3, CalendarUnit.DAY, PARIS)));
		for (List<Limit> retuning : retunings) {
			at(ms(100));
			Limit before = retuning.get(0);
			Limit after = retuning.get(1);
			assertThat(this.limiter.acquire(before, "k").allowed()).as(before.toString()).isTrue();
			int admitted = 0;
			for (int i = 0; i < 5; i++) {
				Decision decision = this.limiter.acquire(after, "k");
				assertThat(decision.resetAfter()).as(after.toString()).isLessThanOrEqualTo(Duration.ofDays(1));
				admitted += decision.allowed() ? 1 : 0;
			}
			assertThat(admitted).as(after.toString()).isBetween(2, 3);
			this.clock.advance(Duration.ofDays(1).plusHours(1));
			assertThat(this.limiter.acquire(after, "k").remaining()).as(after.toString()).isEqualTo(2);
		}
	}

	@Test
	void aSlidingLogTakesLargeCosts() {
		Limit limit = SlidingWindowLog.of("bulk", 20_000, Duration.ofMinutes(1));
		assertDecision(this.limiter.acquire(limit, "k", 12_000), true, 8_000, 0, Duration.ofMinutes(1));
		assertThat(this.limiter.acquire(limit, "k", 9_000).allowed()).isFalse();
		assertThat(this.limiter.acquire(limit, "k", 8_000).remaining()).isZero();
		this.limiter.reset(limit, "k");
		assertThat(this.limiter.record(limit, "k").remaining()).isEqualTo(19_999);
	}

	@Test
	void hostileKeysAreJustKeys() {
		Limit limit = FixedWindow.of("hostile", 1, Duration.ofMinutes(1));
		String[] keys = { "", "{tag}", "}{", "a\r\nb", "ümlaut😀", "x".repeat(LimitRequest.MAX_KEY_LENGTH), "~abc",
				"\u0000\u0001binary\uffff" };
		for (String key : keys) {
			assertThat(this.limiter.acquire(limit, key).allowed()).as("first call for %s", key).isTrue();
		}
		for (String key : keys) {
			assertThat(this.limiter.acquire(limit, key).allowed()).as("second call for %s", key).isFalse();
		}
	}

	@Test
	void aBurstAcrossAWindowBoundaryIsBoundedByTheAlgorithm() {
		Limit log = SlidingWindowLog.of("boundary-log", 5, Duration.ofSeconds(1));
		Limit counter = SlidingWindowCounter.of("boundary-counter", 5, Duration.ofSeconds(1));
		Limit fixed = FixedWindow.of("boundary-fixed", 5, Duration.ofSeconds(1));
		at(ms(999));
		for (int i = 0; i < 5; i++) {
			assertThat(this.limiter.acquire(log, "k").allowed()).isTrue();
			assertThat(this.limiter.acquire(counter, "k").allowed()).isTrue();
			assertThat(this.limiter.acquire(fixed, "k").allowed()).isTrue();
		}
		at(ms(1001));
		int log2 = 0;
		int counter2 = 0;
		int fixed2 = 0;
		for (int i = 0; i < 5; i++) {
			log2 += this.limiter.acquire(log, "k").allowed() ? 1 : 0;
			counter2 += this.limiter.acquire(counter, "k").allowed() ? 1 : 0;
			fixed2 += this.limiter.acquire(fixed, "k").allowed() ? 1 : 0;
		}
		assertThat(log2).as("exact: nothing until the first five leave the window").isZero();
		assertThat(counter2).as("weighted: 5 × 0.999 of the previous window still count").isZero();
		assertThat(fixed2).as("the documented 2x burst of a fixed window").isEqualTo(5);
	}

	@Test
	void aFreshKeyTakesTheWholeCapacityAtRatesThatAreNotWholeMicroseconds() {
		// 1/3 s and 3/7 s per permit are not whole microseconds; times near 1.78e15 us are doubles 0.25 us apart, and
		// rounding once rejected these calls on a fresh key (every key, at these times).
		List<Limit> limits = List.of(TokenBucket.of("third", 2, 3, Duration.ofSeconds(1)),
				TokenBucket.of("seventh-share", 100, 7, Duration.ofSeconds(1)).dividedBy(3),
				LeakyBucket.nodelay("leaky-third", 3, Duration.ofSeconds(1), 1));
		for (Limit limit : limits) {
			for (int key = 0; key < 20; key++) {
				at(Duration.ofNanos(key * 7_001_000L));
				Decision decision = this.limiter.acquire(limit, "k" + key, limit.capacity());
				assertThat(decision.allowed()).as("%s, key %d", limit, key).isTrue();
				assertThat(decision.remaining()).isZero();
				assertThat(this.limiter.acquire(limit, "k" + key).allowed()).isFalse();
			}
		}
	}

	@Test
	void bucketsAreExactAtRatesThatAreNoWholeMicrosecondsOneCallAtATime() {
		// 1.1 us per permit: absolute times held as doubles (0.25 us apart near now) once admitted about 1,100 of 1,000.
		for (Limit limit : List.of(TokenBucket.of("tenth", 1000, 10, Duration.ofNanos(11_000)),
				LeakyBucket.nodelay("leaky-tenth", 10, Duration.ofNanos(11_000), 999))) {
			at(Duration.ofNanos(123_456_789_000L));
			int admitted = 0;
			for (int i = 0; i < 1001; i++) {
				admitted += this.limiter.acquire(limit, "k").allowed() ? 1 : 0;
			}
			assertThat(admitted).as("%s: one instant", limit).isEqualTo(1000);
			at(Duration.ofNanos(123_456_789_000L + 11_000));
			admitted = 0;
			for (int i = 0; i < 11; i++) {
				admitted += this.limiter.acquire(limit, "k").allowed() ? 1 : 0;
			}
			assertThat(admitted).as("%s: 11 us later, 10 permits came back", limit).isEqualTo(10);
		}
	}

	@Test
	void bucketsAreExactAtTheEdgesOfTheRatesTheyAccept() {
		Duration micro = Duration.ofNanos(1_000);
		// A billion per second, a million in the bucket: a thousand permits per microsecond.
		Limit giga = TokenBucket.of("giga", 1_000_000, 1_000_000_000, Duration.ofSeconds(1));
		assertMicros(this.limiter.acquire(giga, "k", 1_000_000), true, 0, 0, 1000);
		assertMicros(this.limiter.acquire(giga, "k"), false, 0, 1, 1000);
		at(micro);
		assertMicros(this.limiter.acquire(giga, "k", 1000), true, 0, 0, 1000);
		assertThat(this.limiter.acquire(giga, "k").allowed()).isFalse();
		// Ten million per second: ten per microsecond, where a double time did not move and nothing was limited.
		Limit tenMega = TokenBucket.of("ten-mega", 10, 10_000_000, Duration.ofSeconds(1));
		for (int i = 0; i < 10; i++) {
			assertThat(this.limiter.acquire(tenMega, "k").allowed()).isTrue();
		}
		assertMicros(this.limiter.acquire(tenMega, "k"), false, 0, 1, 1);
		// A million per second, a million in the bucket: one microsecond each.
		Limit mega = TokenBucket.of("mega", 1_000_000, Duration.ofSeconds(1));
		assertMicros(this.limiter.acquire(mega, "k", 999_999), true, 1, 0, 999_999);
		assertMicros(this.limiter.acquire(mega, "k", 2), false, 1, 1, 999_999);
		// One per day, capacity 1.
		Limit daily = TokenBucket.of("daily", 1, Duration.ofDays(1));
		assertDecision(this.limiter.acquire(daily, "k"), true, 0, 0, Duration.ofDays(1));
		at(Duration.ofDays(1).plus(micro).minusNanos(1_000));
		assertDecision(this.limiter.acquire(daily, "k"), false, 0, Duration.ofNanos(1_000), Duration.ofNanos(1_000));
		at(Duration.ofDays(1).plus(micro));
		assertDecision(this.limiter.acquire(daily, "k"), true, 0, 0, Duration.ofDays(1));
	}

	@Test
	void oversizedKeysAreRejectedBeforeTheBackend() {
		Limit limit = FixedWindow.of("oversized", 1, Duration.ofMinutes(1));
		String megabyte = "k".repeat(1 << 20);
		org.assertj.core.api.Assertions.assertThatIllegalArgumentException()
			.isThrownBy(() -> this.limiter.acquire(limit, megabyte))
			.withMessage("key of limit 'oversized' is 1048576 characters long, above the maximum of 4096");
	}

	// What the differential review of local against Redis found (2026-11-24)

	@Test
	void aFixedWindowWhoseClockWentBackCountsIntoTheNewerWindow() {
		Limit limit = FixedWindow.of("fw-back", 1, Duration.ofSeconds(1));
		at(Duration.ZERO);
		assertThat(this.limiter.acquire(limit, "k").allowed()).isTrue();
		this.clock.set(T0.minusNanos(1000));
		assertThat(this.limiter.acquire(limit, "k").allowed())
			.as("1 us back, in the window before: decided in the newer window, not a fresh one over it").isFalse();
		this.clock.set(T0.plusNanos(1000));
		assertThat(this.limiter.acquire(limit, "k").allowed()).as("one permit per window, the clock notwithstanding")
			.isFalse();
	}

	@Test
	void aSlidingCounterWhoseClockWentBackCountsIntoTheNewerWindow() {
		Limit limit = SlidingWindowCounter.of("sc-back", 1, Duration.ofSeconds(1));
		at(Duration.ZERO);
		assertThat(this.limiter.acquire(limit, "k").allowed()).isTrue();
		this.clock.set(T0.minusNanos(1000));
		assertThat(this.limiter.acquire(limit, "k").allowed()).isFalse();
		this.clock.set(T0.plusNanos(1000));
		assertThat(this.limiter.acquire(limit, "k").allowed()).isFalse();
	}

	@Test
	void aBucketRefundedToFullReadsFullEvenWhenTheClockGoesBack() {
		Limit limit = TokenBucket.of("refunded-full", 1, Duration.ofSeconds(1));
		at(Duration.ZERO);
		Decision taken = this.limiter.acquire(limit, "k");
		this.limiter.refund(List.of(LimitRequest.of(limit, "k")), taken);
		this.clock.set(T0.minusNanos(1000));
		assertThat(this.limiter.check(limit, "k").allowed()).as("full: no state, on every backend").isTrue();
	}

	@Test
	void aSlidingLogRefundTakesBackTheCallsOwnPermitsAndNoOtherCalls() {
		Limit limit = SlidingWindowLog.of("log-own", 2, Duration.ofSeconds(1));
		List<LimitRequest> requests = List.of(LimitRequest.of(limit, "k"));
		at(Duration.ZERO);
		Decision first = this.limiter.acquire(limit, "k");
		this.limiter.reset(limit, "k");
		assertThat(this.limiter.acquire(limit, "k").allowed()).isTrue();
		assertThat(this.limiter.acquire(limit, "k").allowed()).isTrue();
		this.limiter.refund(requests, first);
		assertThat(this.limiter.acquire(limit, "k").allowed())
			.as("the first call's permit went with the reset: its refund takes nobody else's").isFalse();

		Limit saturated = SlidingWindowLog.of("log-recorded", 1, Duration.ofSeconds(1));
		Decision admitted = this.limiter.acquire(saturated, "k");
		this.limiter.record(saturated, "k");
		this.limiter.refund(List.of(LimitRequest.of(saturated, "k")), admitted);
		assertThat(this.limiter.acquire(saturated, "k").allowed())
			.as("the record that saturated the log stands; the refund freed nothing it counted").isFalse();

		Limit one = SlidingWindowLog.of("log-once", 1, Duration.ofSeconds(1));
		Decision taken = this.limiter.acquire(one, "k");
		this.limiter.refund(List.of(LimitRequest.of(one, "k")), taken);
		assertThat(this.limiter.acquire(one, "k").allowed()).isTrue();
		this.limiter.refund(List.of(LimitRequest.of(one, "k")), taken);
		assertThat(this.limiter.acquire(one, "k").allowed()).as("a second refund of one call gives nothing").isFalse();
	}

	@Test
	void aDecisionNamingOneLimitAndKeyTwiceIsRefusedItWouldJudgeBothAgainstOneState() {
		Limit limit = FixedWindow.of("fw-twice", 3, Duration.ofSeconds(1));
		assertThatThrownBy(() -> this.limiter.acquire(new LimitRequest(limit, "k", 3), new LimitRequest(limit, "k", 2)))
			.isInstanceOf(IllegalArgumentException.class)
			.hasMessageContaining("limit 'fw-twice' on key 'k' twice");
		assertThat(this.limiter.acquire(limit, "k", 3).allowed()).as("nothing was taken").isTrue();
	}

	@Test
	void aTokenBucketAndALeakyBucketOfOneNameShareOneState() {
		Limit bucket = TokenBucket.of("shared-gcra", 1, Duration.ofSeconds(1));
		Limit leaky = LeakyBucket.nodelay("shared-gcra", 1, Duration.ofSeconds(1), 0);
		assertThat(this.limiter.acquire(bucket, "k").allowed()).isTrue();
		assertThat(this.limiter.acquire(leaky, "k").allowed()).as("one key, as on Redis").isFalse();
	}

	protected static void assertDecision(Decision decision, boolean allowed, long remaining, Duration retryAfter,
			Duration resetAfter) {
		assertThat(decision.allowed()).as("allowed of %s", decision).isEqualTo(allowed);
		assertThat(decision.remaining()).as("remaining of %s", decision).isEqualTo(remaining);
		assertThat(decision.retryAfter()).as("retry-after of %s", decision).isEqualTo(retryAfter);
		assertThat(decision.resetAfter()).as("reset-after of %s", decision).isEqualTo(resetAfter);
	}

	private static void assertMicros(Decision decision, boolean allowed, long remaining, long retryAfterMicros,
			long resetAfterMicros) {
		assertDecision(decision, allowed, remaining, Duration.ofNanos(retryAfterMicros * 1000),
				Duration.ofNanos(resetAfterMicros * 1000));
	}

	protected static void assertDecision(Decision decision, boolean allowed, long remaining, long retryAfterMicros,
			Duration resetAfter) {
		assertDecision(decision, allowed, remaining, Duration.ofNanos(retryAfterMicros * 1000), resetAfter);
	}

}
