package io.github.limiter.spring.annotation;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Repeatable;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

import io.github.limiter.algorithm.Algorithm;

/**
 * Limits the rate of calls to a method of a Spring bean, across every instance of the application that shares the
 * backend.
 *
 * <pre>{@code
 * @RateLimit(key = "#userId", max = "10", window = "1m")
 * public Order place(String userId, Cart cart) { ... }
 * }</pre>
 *
 * <p>Several annotations on one method form one all-or-nothing decision (per user and per IP, once per day and three
 * times per week). On a class, the annotation applies to every public method, in addition to the method's own.
 *
 * <p>Every attribute but {@link #algorithm()} is text and may hold {@code ${...}} placeholders. An empty attribute
 * takes its value from the named {@link #policy()} ({@code limiter.policies.<name>.*}), then from
 * {@code limiter.defaults.*}, then from the built-in default. A rejected call throws
 * {@link io.github.limiter.RateLimitExceededException} (HTTP 429 in a web application), or returns the
 * {@link #fallback()} method's result.
 *
 * <p>The annotation works through a Spring AOP proxy: calls from within the same object ({@code this.method()}) are
 * not limited, and private, static or final methods cannot be; an annotation on such a method fails startup.
 */
@Target({ ElementType.METHOD, ElementType.TYPE })
@Retention(RetentionPolicy.RUNTIME)
@Documented
@Repeatable(RateLimits.class)
public @interface RateLimit {

	/**
	 * Name of the limit, in storage keys, metrics and the endpoint. By default the method's identity
	 * ({@code SimpleClassName.method}), so that two methods never share a limit by accident; methods that name the same
	 * limit share its state.
	 * @return the name
	 */
	String name() default "";

	/**
	 * SpEL expression of the key the limit applies to, for example {@code #userId}, {@code #p0}, {@code #ip},
	 * {@code #principal?.name}, {@code #request.getHeader('X-Tenant')} or {@code @tenants.current()}. Empty means one
	 * limit for all calls of the method. A key that evaluates to {@code null} or an empty string is handled as
	 * {@code limiter.empty-key} says (a shared bucket by default), never as "unlimited".
	 * @return the key expression
	 */
	String key() default "";

	/**
	 * Permits per {@link #window()}: the limit of a window algorithm, the refill of a token bucket, the rate of a leaky
	 * bucket.
	 * @return a positive integer, or a placeholder
	 */
	String max() default "";

	/**
	 * Window length, or refill period of a bucket: {@code 500ms}, {@code 1s}, {@code 1m}, {@code 1h}, {@code 1d} or
	 * ISO-8601 such as {@code PT1M}. A bare number is milliseconds, as in Spring Boot's properties.
	 * @return a positive duration, or a placeholder
	 */
	String window() default "";

	/**
	 * Algorithm; none means the policy's or the default ({@code TOKEN_BUCKET}).
	 * @return at most one algorithm
	 */
	Algorithm[] algorithm() default {};

	/**
	 * Permits one call takes ({@code 1} by default).
	 * @return a positive integer, or a placeholder
	 */
	String cost() default "";

	/**
	 * Token bucket only: the most tokens the bucket holds, the largest burst ({@link #max()} by default).
	 * @return a positive integer, or a placeholder
	 */
	String capacity() default "";

	/**
	 * Token bucket only: starts the bucket cold after it was idle (and when new), at a third of its rate and burst,
	 * reaching its full rate over this period of steady demand, as Guava's {@code RateLimiter.create(rate, warmup)}
	 * (none by default): {@code 10s}, {@code 1m} or ISO-8601.
	 * @return a positive duration, or a placeholder
	 */
	String warmup() default "";

	/**
	 * Leaky bucket only: requests accepted beyond the rate ({@code 0} by default), as nginx {@code burst}.
	 * @return a non-negative integer, or a placeholder
	 */
	String burst() default "";

	/**
	 * Leaky bucket only: {@code true} to serve the burst at once (nginx {@code nodelay}); {@code false} (the default)
	 * to make each admitted call wait its turn.
	 * @return {@code true} or {@code false}, or a placeholder
	 */
	String nodelay() default "";

	/**
	 * Leaky bucket only: of the excess requests, how many are served at once before the rest wait their turn, as
	 * nginx {@code burst=N delay=M} (two-stage limiting); between {@code 0} (the default: all wait) and
	 * {@link #burst()} (as {@link #nodelay()}).
	 * @return a non-negative integer, or a placeholder
	 */
	String delay() default "";

	/**
	 * Fixed window only: align windows to calendar periods ({@code DAY}, {@code WEEK} or {@code MONTH}) in
	 * {@link #zone()} instead of to the epoch; {@link #window()} must then be empty.
	 * @return a calendar unit, or a placeholder
	 */
	String calendar() default "";

	/**
	 * Fixed window with {@link #calendar()} only: the time zone whose midnight starts a period (the JVM's by default).
	 * @return a zone ID such as {@code Europe/Paris}, or a placeholder
	 */
	String zone() default "";

	/**
	 * {@code shared} (default): one limit for all instances; {@code per-instance}: one limit per instance.
	 * @return the scope, or a placeholder
	 */
	String scope() default "";

	/**
	 * Name of a policy in {@code limiter.policies}, which supplies every attribute left empty here.
	 * @return the policy name, or a placeholder
	 */
	String policy() default "";

	/**
	 * What happens when the backend cannot answer within {@code limiter.failure.deadline}: {@code local} (decide on a
	 * per-instance share of the limit), {@code open} (admit) or {@code closed} (reject). Default:
	 * {@code limiter.failure.policy}.
	 * @return the failure policy, or a placeholder
	 */
	String onFailure() default "";

	/**
	 * Longest time a call may wait for a permit instead of being rejected, for example {@code 500ms}. The wait is
	 * computed from the decision's retry-after (the backend is asked again at most a few times, never polled); a
	 * blocking method waits on its thread, a reactive one is delayed without blocking. It also bounds a queueing leaky
	 * bucket's turn: a call whose turn is further away is rejected at once, taking no place in the queue. Default: no
	 * wait, and a queued call waits up to its bucket's {@code burst} turns.
	 * @return the longest wait, or a placeholder
	 */
	String maxWait() default "";

	/**
	 * Count only failed calls: a permit is taken before the call (rejecting when the key is over the limit) and given
	 * back after it unless the method threw one of these exceptions (or a subclass). Calls running at once each hold
	 * their permit, so they cannot all pass before one of them has failed. For failed logins.
	 * @return the exception types that count
	 */
	Class<? extends Throwable>[] recordOn() default {};

	/**
	 * Whether the limit applies to a call at all, as {@code @Cacheable}'s {@code condition}: a SpEL expression over
	 * the arguments, {@code #ip}, {@code #request}, {@code #principal} and beans ({@code @plans.isPremium(#user)}),
	 * evaluated before the decision; when it is not {@code true} the limit is skipped for that call (counted in the
	 * metrics with the outcome {@code skipped}). For example {@code "#request.getHeader('X-Internal') == null"}.
	 * Parsed and checked at startup; never taken from configuration.
	 * @return the condition, empty to apply the limit to every call
	 */
	String condition() default "";

	/**
	 * Count only failed calls, as {@link #recordOn()}: a SpEL condition on {@code #result} (and the arguments),
	 * evaluated after the call returns; {@code true} keeps the permit the call took, {@code false} gives it back. For
	 * example {@code "#result == false"}.
	 * @return the condition, or a placeholder
	 */
	String recordIf() default "";

	/**
	 * {@code true} to run the limit in shadow mode: decided and counted (outcome of operation {@code shadow}), but
	 * never rejecting, to dark-launch a limit. Default: {@code limiter.shadow}.
	 * @return {@code true} or {@code false}, or a placeholder
	 */
	String shadow() default "";

	/**
	 * Name of a method of the same class called instead when the call is rejected: same parameters, optionally
	 * followed by a {@link io.github.limiter.RateLimitExceededException}, and a compatible return type.
	 * @return the fallback method name, or a placeholder
	 */
	String fallback() default "";

}
