package io.github.limiter.spring.interceptor;

import java.time.Duration;

import org.aopalliance.intercept.MethodInvocation;
import org.springframework.aop.ProxyMethodInvocation;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

import io.github.limiter.spring.web.Caller;
import io.github.limiter.spring.web.ExchangeCaller;

/**
 * Limits methods returning {@code Mono} or {@code Flux} when they are subscribed, through the asynchronous backend
 * API: no thread waits for Redis, and waits and queue delays are {@code Mono.delay}s. In a WebFlux request, the
 * caller comes from the exchange in the Reactor context. Loaded only when Reactor is present.
 */
final class ReactiveRateLimits {

	private ReactiveRateLimits() {
	}

	static boolean isReactive(Class<?> returnType) {
		return Mono.class.isAssignableFrom(returnType) || Flux.class.isAssignableFrom(returnType);
	}

	static Object limit(RateLimitInterceptor interceptor, MethodInvocation invocation, RateLimitedMethod limited,
			Class<?> targetClass) {
		Mono<RateLimitInterceptor.Call> call = Mono.deferContextual(context -> {
			Mono<Caller> caller = context.<org.springframework.web.server.ServerWebExchange>getOrEmpty(
					ExchangeCaller.CONTEXT_KEY)
				.map(ExchangeCaller::of)
				.orElseGet(() -> Mono.just(Caller.SERVLET));
			return caller.map(who -> interceptor.new Call(limited, invocation.getArguments(), invocation.getThis(),
					targetClass, who));
		});
		boolean mono = Mono.class.isAssignableFrom(invocation.getMethod().getReturnType());
		// publishOn: the method's publisher is assembled off the Redis client's I/O thread and the deadline thread.
		Mono<Object> admitted = call.flatMap(limitedCall -> Mono.fromCompletionStage(() -> interceptor.admit(limitedCall))
			.publishOn(Schedulers.parallel())
			.flatMap(admission -> {
				if (admission.rejection() != null) {
					return Mono.defer(() -> {
						try {
							return Mono.justOrEmpty(interceptor.rejected(limitedCall, admission.rejection()));
						}
						catch (Throwable failure) {
							return Mono.error(failure);
						}
					});
				}
				Mono<Object> proceed = Mono.just(new Proceed(interceptor, limitedCall, invocation));
				return (admission.delayNanos() > 0) ? Mono.delay(Duration.ofNanos(admission.delayNanos())).then(proceed)
						: proceed;
			}));
		if (mono) {
			return admitted.flatMap(next -> (next instanceof Proceed proceed) ? proceed.mono()
					: (next instanceof Mono<?> fallback) ? fallback : Mono.just(next));
		}
		return admitted.flatMapMany(next -> (next instanceof Proceed proceed) ? proceed.flux()
				: (next instanceof Publisher<?> fallback) ? Flux.from(fallback) : Flux.just(next));
	}

	/**
	 * An admitted call. The method is invoked only now, on a clone of the invocation, so that each subscription
	 * (a retry, say) runs the rest of the interceptor chain again.
	 */
	private record Proceed(RateLimitInterceptor interceptor, RateLimitInterceptor.Call call, MethodInvocation invocation) {

		@SuppressWarnings("unchecked")
		private Publisher<Object> publisher() {
			try {
				MethodInvocation clone = (this.invocation instanceof ProxyMethodInvocation proxy) ? proxy.invocableClone()
						: this.invocation;
				return (Publisher<Object>) clone.proceed();
			}
			catch (Throwable failure) {
				return Mono.error(failure);
			}
		}

		Mono<Object> mono() {
			Mono<Object> result = Mono.from(publisher());
			if (this.call.checked.isEmpty()) {
				return result;
			}
			return result.doOnError(failure -> this.interceptor.recordFailuresSafely(this.call, failure, null, false))
				.doOnSuccess(value -> this.interceptor.recordFailuresSafely(this.call, null, value, false));
		}

		Flux<Object> flux() {
			Flux<Object> result = Flux.from(publisher());
			if (this.call.checked.isEmpty()) {
				return result;
			}
			// A stream counts as failed when it ends with an error; recordIf applies to single results only.
			return result.doOnError(failure -> this.interceptor.recordFailuresSafely(this.call, failure, null, false));
		}

	}

}
