package io.github.limiter.spring.interceptor;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import io.github.limiter.Decision;
import io.github.limiter.Limit;
import io.github.limiter.LimitRequest;
import io.github.limiter.Operation;
import io.github.limiter.RateLimiter;
import io.github.limiter.backend.local.LocalBackend;
import io.github.limiter.spi.RateLimiterBackend;
import io.github.limiter.spring.annotation.RateLimit;
import io.github.limiter.spring.autoconfigure.RateLimiterAutoConfiguration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

/**
 * A call whose admission fails after its limits admitted it (here its shadow limit's decision fails) never runs: what
 * its enforced limits took goes back, and so does what its failure-counting limits reserved, since it cannot have
 * failed.
 */
class AdmissionFailureTests {

	@Test
	void aCallWhoseAdmissionFailsGivesBackWhatItReserved() {
		LocalBackend local = LocalBackend.create();
		new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(RateLimiterAutoConfiguration.class))
			.withBean(RateLimiter.class, () -> RateLimiter.of(new ShadowFails(local)))
			.withBean(Login.class)
			.withPropertyValues("limiter.backend=local")
			.run(context -> {
				Login login = context.getBean(Login.class);
				for (int i = 0; i < 3; i++) {
					assertThatIllegalStateException().isThrownBy(() -> login.attempt("bob")).withMessage("shadow store down");
				}
				assertThat(login.runs()).isZero();
				Limit failures = AnnotationRateLimitOperationSource
				.byLimit(context.getBean(RateLimitOperationSource.class).rateLimitedMethods())
				.get("failures")
				.limit();
				// A check answers what would remain after one more call: all three permits are there, and all of the
				// enforced limit's hundred.
				RateLimiter limiter = context.getBean(RateLimiter.class);
				assertThat(limiter.check(failures, "bob").remaining()).isEqualTo(2);
				Limit perApp = AnnotationRateLimitOperationSource
				.byLimit(context.getBean(RateLimitOperationSource.class).rateLimitedMethods())
				.get("per-app")
				.limit();
				assertThat(limiter.check(perApp, "").remaining()).isEqualTo(99);
			});
	}

	/** The local backend, except that shadow decisions fail. */
	record ShadowFails(LocalBackend local) implements RateLimiterBackend {

		@Override
		public CompletionStage<Decision> decideAsync(List<LimitRequest> requests, Operation operation) {
			return (operation == Operation.SHADOW)
					? CompletableFuture.failedFuture(new IllegalStateException("shadow store down"))
					: this.local.decideAsync(requests, operation);
		}

		@Override
		public CompletionStage<Void> resetAsync(Limit limit, String key) {
			return this.local.resetAsync(limit, key);
		}

		@Override
		public CompletionStage<Void> refundAsync(List<LimitRequest> requests, Decision acquired) {
			return this.local.refundAsync(requests, acquired);
		}

	}

	static class Login {

		private final AtomicInteger runs = new AtomicInteger();

		int runs() {
			return this.runs.get();
		}

		@RateLimit(name = "failures", key = "#user", max = "3", window = "1h", recordOn = IllegalArgumentException.class)
		@RateLimit(name = "per-app", max = "100", window = "1h")
		@RateLimit(name = "dark", max = "100", window = "1h", shadow = "true")
		public void attempt(String user) {
			this.runs.incrementAndGet();
		}

	}

}
