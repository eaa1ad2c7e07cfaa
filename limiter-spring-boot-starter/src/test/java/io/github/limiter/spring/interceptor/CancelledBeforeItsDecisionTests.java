package io.github.limiter.spring.interceptor;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

import io.github.limiter.Decision;
import io.github.limiter.Limit;
import io.github.limiter.LimitRequest;
import io.github.limiter.Operation;
import io.github.limiter.RateLimiter;
import io.github.limiter.backend.local.LocalBackend;
import io.github.limiter.spi.RateLimiterBackend;
import io.github.limiter.spring.annotation.RateLimit;
import io.github.limiter.spring.autoconfigure.RateLimiterAutoConfiguration;
import io.github.limiter.spring.autoconfigure.RateLimiterMetricsAutoConfiguration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A reactive call whose subscriber goes away while its decision is still on its way (as from Redis), without
 * {@code maxWait}: when the admission arrives, nobody will run the method, so its permit goes back.
 */
class CancelledBeforeItsDecisionTests {

	static final AtomicInteger refunds = new AtomicInteger();

	/** The local backend, answering each acquisition 300 ms later, as a slow Redis would. */
	static final class Slow implements RateLimiterBackend {

		private final LocalBackend local = LocalBackend.create();

		@Override
		public CompletionStage<Decision> decideAsync(List<LimitRequest> requests, Operation operation) {
			Decision decision = this.local.decide(requests, operation);
			return CompletableFuture.supplyAsync(() -> decision,
					CompletableFuture.delayedExecutor(300, TimeUnit.MILLISECONDS));
		}

		@Override
		public CompletionStage<Void> resetAsync(Limit limit, String key) {
			return this.local.resetAsync(limit, key);
		}

		@Override
		public CompletionStage<Void> refundAsync(List<LimitRequest> requests, Decision acquired) {
			refunds.incrementAndGet();
			return this.local.refundAsync(requests, acquired);
		}

	}

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(RateLimiterAutoConfiguration.class, RateLimiterMetricsAutoConfiguration.class))
		.withBean(MeterRegistry.class, SimpleMeterRegistry::new)
		.withBean(RateLimiter.class, () -> RateLimiter.of(new Slow()))
		.withBean(Service.class)
		.withPropertyValues("limiter.backend=local");

	@Test
	void aCallCancelledWhileItsDecisionIsInFlightGivesItsPermitBack() {
		this.runner.run(context -> {
			Service service = context.getBean(Service.class);
			StepVerifier.create(service.once().timeout(Duration.ofMillis(100)))
				.expectError(java.util.concurrent.TimeoutException.class)
				.verify();
			long end = System.nanoTime() + Duration.ofSeconds(10).toNanos();
			while (refunds.get() == 0 && System.nanoTime() < end) {
				Thread.sleep(10);
			}
			assertThat(service.runs()).as("the cancelled call never ran").isZero();
			assertThat(refunds.get()).as("its admission was given back").isEqualTo(1);
			assertThat(service.once().block()).isEqualTo("ok");
		});
	}

	static class Service {

		final AtomicInteger runs = new AtomicInteger();

		int runs() {
			return this.runs.get();
		}

		@RateLimit(name = "once", max = "1", window = "1h")
		public Mono<String> once() {
			return Mono.fromCallable(() -> {
				this.runs.incrementAndGet();
				return "ok";
			});
		}

	}

}
