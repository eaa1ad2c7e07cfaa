package io.github.limiter.spring.web;

import java.nio.charset.StandardCharsets;

import org.springframework.core.Ordered;
import org.springframework.http.MediaType;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebExceptionHandler;
import reactor.core.publisher.Mono;

/**
 * Answers with the limiter's 429 (or its 400 for a key that cannot be used) a refusal that no WebFlux handler's
 * exception handling saw: one from a limited method that a {@code WebFilter} calls (a {@code
 * ReactiveUserDetailsService} called from Spring Security's chain), or one thrown by a functional endpoint's handler
 * function before it returned its {@code Mono}. Without it Spring Boot's error handling answers such a refusal with a
 * 500.
 *
 * <p>Ordered {@link #ORDER just before} Spring Boot's {@code ErrorWebExceptionHandler} ({@code -1}). A response already
 * committed cannot be answered again, and its refusal is passed on.
 */
public class RateLimitWebExceptionHandler implements WebExceptionHandler, Ordered {

	/** This handler's order: before Spring Boot's error handling ({@code -1}). */
	public static final int ORDER = -2;

	private static final System.Logger logger = System.getLogger(RateLimitWebExceptionHandler.class.getName());

	@Override
	public Mono<Void> handle(ServerWebExchange exchange, Throwable failure) {
		RateLimitAnswer answer = RateLimitAnswer.of(failure);
		ServerHttpResponse response = exchange.getResponse();
		if (answer == null || response.isCommitted()) {
			return Mono.error(failure);
		}
		String path = exchange.getRequest().getPath().value();
		logger.log(System.Logger.Level.DEBUG, () -> "Answered " + answer.status().value() + " for a refusal outside "
				+ "any handler, on " + path + ": " + failure);
		response.setStatusCode(answer.status());
		answer.headers().forEach(response.getHeaders()::set);
		response.getHeaders().setContentType(MediaType.APPLICATION_PROBLEM_JSON);
		byte[] body = answer.json(path).getBytes(StandardCharsets.UTF_8);
		return response.writeWith(Mono.fromSupplier(() -> response.bufferFactory().wrap(body)));
	}

	@Override
	public int getOrder() {
		return ORDER;
	}

}
