package io.github.limiter.spring.web;

import java.lang.reflect.Method;
import java.net.InetSocketAddress;
import java.security.Principal;
import java.util.List;

import org.springframework.http.HttpHeaders;
import org.springframework.web.method.HandlerMethod;
import org.springframework.web.reactive.HandlerMapping;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;
import reactor.core.publisher.Mono;

import io.github.limiter.Decision;
import io.github.limiter.LimitRequest;

/**
 * The caller of a WebFlux request: {@link #FILTER} puts it into the Reactor context of the request, where a reactive
 * {@code @RateLimit} method finds it when it is subscribed. The same filter writes the response fields of the
 * handler's admitted decision just before the response is committed, unless the response already has them (a 429
 * describes the limit that rejected it).
 *
 * <p>The client IP is the remote address after WebFlux's forwarded-header handling
 * ({@code server.forward-headers-strategy}); a raw {@code X-Forwarded-For} header is never read here.
 */
public final class ExchangeCaller implements Caller {

	private static final String FIELDS = ExchangeCaller.class.getName() + ".fields";

	/** Makes the caller available to reactive limited methods and writes the handler's fields. */
	public static final WebFilter FILTER = (exchange, chain) -> {
		exchange.getResponse().beforeCommit(() -> {
			String[] fields = exchange.getAttribute(FIELDS);
			HttpHeaders headers = exchange.getResponse().getHeaders();
			if (fields != null && headers.getFirst(RateLimitHeaders.RATE_LIMIT) == null) {
				headers.set(RateLimitHeaders.POLICY, fields[0]);
				headers.set(RateLimitHeaders.RATE_LIMIT, fields[1]);
			}
			return Mono.empty();
		});
		Mono<Caller> caller = of(exchange).cache();
		return chain.filter(exchange).contextWrite(context -> context.put(CONTEXT_KEY, caller));
	};

	private final ServerWebExchange exchange;

	private final Principal principal;

	private ExchangeCaller(ServerWebExchange exchange, Principal principal) {
		this.exchange = exchange;
		this.principal = principal;
	}

	/**
	 * The caller of an exchange, with its principal resolved (without blocking): none for Spring Security's anonymous
	 * or unauthenticated tokens, as on a servlet request.
	 * @param exchange the exchange
	 * @return the caller
	 */
	public static Mono<Caller> of(ServerWebExchange exchange) {
		return exchange.getPrincipal()
			.map(principal -> (Caller) new ExchangeCaller(exchange, CurrentCaller.authenticated(principal)))
			.defaultIfEmpty(new ExchangeCaller(exchange, null));
	}

	@Override
	public String ip() {
		InetSocketAddress remote = this.exchange.getRequest().getRemoteAddress();
		if (remote == null) {
			return null;
		}
		return (remote.getAddress() != null) ? remote.getAddress().getHostAddress() : remote.getHostString();
	}

	@Override
	public Object request() {
		return this.exchange.getRequest();
	}

	@Override
	public Principal principal() {
		return this.principal;
	}

	@Override
	public boolean handles(Method method) {
		Object handler = this.exchange.getAttribute(HandlerMapping.BEST_MATCHING_HANDLER_ATTRIBUTE);
		return handler instanceof HandlerMethod handlerMethod && Caller.sameMethod(handlerMethod.getMethod(), method);
	}

	@Override
	public void describe(Decision decision, List<LimitRequest> requests) {
		this.exchange.getAttributes()
			.put(FIELDS, new String[] { RateLimitHeaders.policy(decision, requests), RateLimitHeaders.rateLimit(decision, requests) });
	}

}
