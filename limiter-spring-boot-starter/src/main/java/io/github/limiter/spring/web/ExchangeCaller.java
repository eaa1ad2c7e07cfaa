package io.github.limiter.spring.web;

import java.net.InetSocketAddress;
import java.security.Principal;

import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;
import reactor.core.publisher.Mono;

/**
 * The caller of a WebFlux request: {@link #FILTER} puts the exchange into the Reactor context of the request, where a
 * reactive {@code @RateLimit} method finds it when it is subscribed.
 *
 * <p>The client IP is the remote address after WebFlux's forwarded-header handling
 * ({@code server.forward-headers-strategy}); a raw {@code X-Forwarded-For} header is never read here.
 */
public final class ExchangeCaller implements Caller {

	/** Key of the exchange in the Reactor context. */
	public static final Class<ServerWebExchange> CONTEXT_KEY = ServerWebExchange.class;

	/** Makes the exchange available to reactive limited methods. */
	public static final WebFilter FILTER = (exchange, chain) -> chain.filter(exchange)
		.contextWrite(context -> context.put(CONTEXT_KEY, exchange));

	private final ServerWebExchange exchange;

	private final Principal principal;

	private ExchangeCaller(ServerWebExchange exchange, Principal principal) {
		this.exchange = exchange;
		this.principal = principal;
	}

	/**
	 * The caller of an exchange, with its principal resolved (without blocking).
	 * @param exchange the exchange
	 * @return the caller
	 */
	public static Mono<Caller> of(ServerWebExchange exchange) {
		return exchange.getPrincipal()
			.map(principal -> (Caller) new ExchangeCaller(exchange, principal))
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

}
