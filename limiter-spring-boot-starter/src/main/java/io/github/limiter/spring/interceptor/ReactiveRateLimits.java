package io.github.limiter.spring.interceptor;

import java.time.Duration;

import org.aopalliance.intercept.MethodInvocation;
import org.reactivestreams.Publisher;
import org.springframework.aop.ProxyMethodInvocation;
import org.springframework.core.ReactiveAdapter;
import org.springframework.core.ReactiveAdapterRegistry;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

import io.github.limiter.spring.web.Caller;

/**
 * Limits methods returning a reactive type known to Spring's {@link ReactiveAdapterRegistry} ({@code Mono},
 * {@code Flux}, RxJava, Mutiny...) when they are subscribed, through the asynchronous backend API: no thread waits
 * for Redis, and waits and queue delays are timers. In a WebFlux request, the caller comes from the Reactor context,
 * where the limiter's web filter put it; elsewhere it is the servlet request or the thread. Loaded only when Reactor
 * is present; it refers to no web type, so it works in applications without one.
 */
final class ReactiveRateLimits {

	private ReactiveRateLimits() {
	}

	static boolean onNonBlockingThread() {
		return Schedulers.isInNonBlockingThread();
	}

	static Object limit(RateLimitInterceptor interceptor, MethodInvocation invocation, RateLimitedMethod limited,
			Class<?> targetClass) {
		ReactiveAdapter adapter = ReactiveAdapterRegistry.getSharedInstance()
			.getAdapter(invocation.getMethod().getReturnType());
		Caller outside = assembled(Caller.current(), limited);
		Mono<RateLimitInterceptor.Call> call = Mono.deferContextual(context -> context
			.<Mono<Caller>>getOrEmpty(Caller.CONTEXT_KEY)
			.orElseGet(() -> Mono.just(outside))
			.map(who -> interceptor.new Call(limited, invocation.getArguments(), invocation.getThis(), targetClass, who)));
		// publishOn: the method's publisher is assembled off the Redis client's I/O thread and the deadline thread.
		Mono<Object> admitted = call.flatMap(limitedCall -> Mono.fromFuture(() -> interceptor.admit(limitedCall))
			.publishOn(Schedulers.parallel())
			.flatMap(admission -> {
				if (admission.rejection() != null) {
					return Mono.defer(() -> {
						try {
							return Mono.just(new Fallback(interceptor.rejected(limitedCall, admission.rejection())));
						}
						catch (Throwable failure) {
							return Mono.error(failure);
						}
					});
				}
				interceptor.describe(limitedCall, admission.decision(), admission.requests());
				Mono<Object> proceed = Mono.just(new Proceed(interceptor, limitedCall, invocation, adapter));
				return (admission.delayNanos() > 0) ? Mono.delay(Duration.ofNanos(admission.delayNanos())).then(proceed)
						: proceed;
			})
			// Cancelled before the method ran (waiting for a permit or its turn): what the call took goes back.
			.doOnCancel(() -> interceptor.cancelled(limitedCall)));
		if (adapter.isMultiValue()) {
			return adapter.fromPublisher(admitted.flatMapMany(next -> (next instanceof Proceed proceed) ? proceed.flux()
					: Flux.from(((Fallback) next).publisher(adapter))));
		}
		return adapter.fromPublisher(admitted.flatMap(next -> (next instanceof Proceed proceed) ? proceed.mono()
				: Mono.from(((Fallback) next).publisher(adapter))));
	}

	/**
	 * The caller of a servlet request as it is while the call is assembled, on the request's thread: the publisher may
	 * be subscribed on another thread (a retry, {@code subscribeOn}), which has no security context, or after the
	 * request ended, when the container has recycled its request object. Its address, principal and whether the method
	 * is the request's handler are read now; {@code #request} stays the request itself. Elsewhere (no request on this
	 * thread) the caller as it is.
	 */
	private static Caller assembled(Caller caller, RateLimitedMethod limited) {
		if (caller.request() == null) {
			return caller;
		}
		// The address and principal only for a method whose expressions read them: a lookup per call otherwise.
		boolean reads = limited.usesCaller();
		return new Assembled(caller, reads ? caller.ip() : null, reads ? caller.principal() : null,
				caller.handles(limited.method()));
	}

	private record Assembled(Caller caller, String ip, java.security.Principal principal, boolean handler)
			implements Caller {

		@Override
		public Object request() {
			return this.caller.request();
		}

		@Override
		public boolean handles(java.lang.reflect.Method method) {
			return this.handler;
		}

		@Override
		public void describe(io.github.limiter.Decision decision, java.util.List<io.github.limiter.LimitRequest> requests) {
			this.caller.describe(decision, requests);
		}

	}

	/** What a fallback returned: the same reactive type as the method, or {@code null}. */
	private record Fallback(Object result) {

		@SuppressWarnings("unchecked")
		Publisher<Object> publisher(ReactiveAdapter adapter) {
			return (this.result != null) ? (Publisher<Object>) adapter.toPublisher(this.result) : Mono.empty();
		}

	}

	/**
	 * An admitted call. The method is invoked only now, on a clone of the invocation, so that each subscription
	 * (a retry, say) runs the rest of the interceptor chain again.
	 */
	private record Proceed(RateLimitInterceptor interceptor, RateLimitInterceptor.Call call, MethodInvocation invocation,
			ReactiveAdapter adapter) {

		@SuppressWarnings("unchecked")
		private Publisher<Object> publisher() {
			try {
				if (!this.interceptor.running(this.call)) {
					return Mono.empty();
				}
				MethodInvocation clone = (this.invocation instanceof ProxyMethodInvocation proxy) ? proxy.invocableClone()
						: this.invocation;
				Object result = clone.proceed();
				return (result != null) ? (Publisher<Object>) this.adapter.toPublisher(result) : Mono.empty();
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
			// Cancelled while its method ran, the call keeps its reservation (RateLimitInterceptor.cancelled).
			return result.doOnError(failure -> this.interceptor.settleSafely(this.call, failure, null, false))
				.doOnSuccess(value -> this.interceptor.settleSafely(this.call, null, value, false));
		}

		Flux<Object> flux() {
			Flux<Object> result = Flux.from(publisher());
			if (this.call.checked.isEmpty()) {
				return result;
			}
			// A stream counts as failed when it ends with an error, or is cancelled before it ends (it may have failed);
			// recordIf applies to single results only.
			return result.doOnError(failure -> this.interceptor.settleSafely(this.call, failure, null, false))
				.doOnComplete(() -> this.interceptor.settleSafely(this.call, null, null, false));
		}

	}

}
