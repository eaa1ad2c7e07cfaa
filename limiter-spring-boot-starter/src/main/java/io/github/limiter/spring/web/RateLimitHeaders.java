package io.github.limiter.spring.web;

import java.time.Duration;
import java.util.List;
import java.util.StringJoiner;

import org.springframework.util.ClassUtils;

import io.github.limiter.Decision;
import io.github.limiter.LimitRequest;

/**
 * The HTTP header fields of a decision: {@code Retry-After} (RFC 9110) and the IETF {@code RateLimit-Policy} and
 * {@code RateLimit} fields (draft-ietf-httpapi-ratelimit-headers), one list member per limit:
 *
 * <pre>
 * RateLimit-Policy: "api";q=100;w=60
 * RateLimit: "api";r=42;t=18
 * </pre>
 *
 * {@code q} is the limit's capacity, {@code w} its window in seconds (for a window that is not a whole number of
 * seconds, {@code w} is rounded up and {@code q} scaled to it, so {@code q/w} is the limit's rate), {@code r} the
 * permits remaining, {@code t} the seconds until the limit is full again.
 */
public final class RateLimitHeaders {

	/** Name of the quota policy field. */
	public static final String POLICY = "RateLimit-Policy";

	/** Name of the quota state field. */
	public static final String RATE_LIMIT = "RateLimit";

	private static final boolean SERVLET_PRESENT = ClassUtils.isPresent("jakarta.servlet.http.HttpServletResponse",
			RateLimitHeaders.class.getClassLoader())
			&& ClassUtils.isPresent("org.springframework.web.context.request.RequestContextHolder",
					RateLimitHeaders.class.getClassLoader());

	private RateLimitHeaders() {
	}

	/**
	 * The {@code RateLimit-Policy} field value: the quota that decided, which is this instance's share of a limit when
	 * its store was down and the share decided (so that {@code q} and {@code r} describe the same quota).
	 * @param decision the decision
	 * @param requests the limits decided, in the order of the decision's parts
	 * @return the value
	 */
	public static String policy(Decision decision, List<LimitRequest> requests) {
		List<Decision> parts = parts(decision);
		StringJoiner value = new StringJoiner(", ");
		for (int i = 0; i < requests.size(); i++) {
			LimitRequest request = requests.get(i);
			long capacity = (i < parts.size()) ? parts.get(i).limit() : request.limit().capacity();
			// w is whole seconds; when the window is not, q is scaled to that rounded window so the rate stays true.
			Duration window = request.limit().window();
			long w = Math.max(1, seconds(window));
			long q = (long) Math.floor(capacity * (w * 1e9 / window.toNanos()));
			value.add(name(request.limit().name()) + ";q=" + Math.max(q, capacity) + ";w=" + w);
		}
		return value.toString();
	}

	/**
	 * The {@code RateLimit} field value.
	 * @param decision the decision
	 * @param requests the limits decided, in the order of the decision's parts
	 * @return the value
	 */
	public static String rateLimit(Decision decision, List<LimitRequest> requests) {
		StringJoiner value = new StringJoiner(", ");
		for (Decision part : parts(decision)) {
			value.add(name(part.limitName()) + ";r=" + part.remaining() + ";t=" + seconds(part.resetAfter()));
		}
		return value.toString();
	}

	/**
	 * The {@code Retry-After} value: whole seconds, rounded up, at least 1 for a rejection.
	 * @param decision the decision
	 * @return seconds
	 */
	public static long retryAfterSeconds(Decision decision) {
		return Math.max(1, seconds(decision.retryAfter()));
	}

	/**
	 * Sets the fields of a rejection on the response of the current servlet request, replacing the fields an admitted
	 * handler set before a limited service it called rejected the request.
	 * @param decision the rejection
	 * @param requests the limits decided
	 * @return whether there was a servlet response on this thread
	 */
	static boolean replaceOnServletResponse(Decision decision, List<LimitRequest> requests) {
		if (!SERVLET_PRESENT) {
			return false;
		}
		return ServletCalls.replaceHeader(POLICY, policy(decision, requests))
				&& ServletCalls.replaceHeader(RATE_LIMIT, rateLimit(decision, requests));
	}

	private static List<Decision> parts(Decision decision) {
		return decision.parts().isEmpty() ? List.of(decision) : decision.parts();
	}

	private static long seconds(Duration duration) {
		long seconds = duration.getSeconds();
		return (duration.getNano() > 0) ? seconds + 1 : seconds;
	}

	private static String name(String name) {
		return '"' + name.replace("\\", "\\\\").replace("\"", "\\\"") + '"';
	}

}
