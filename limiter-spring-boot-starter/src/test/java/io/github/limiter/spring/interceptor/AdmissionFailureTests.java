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
import io.github.limiter.spring.annotation.RateLimit;
import io.github.limiter.spring.autoconfigure.RateLimiterAutoConfiguration;
import io.github.limiter.testsupport.LocalDecorator;

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
		new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(RateLimiterAutoConfiguration.class))
			.withBean(RateLimiter.class, () -> RateLimiter.of(new ShadowFails()))
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
	static final class ShadowFails extends LocalDecorator {

		@Override
		public CompletionStage<Decision> decideAsync(List<LimitRequest> requests, Operation operation) {
			return (operation == Operation.SHADOW)
					? CompletableFuture.failedFuture(new IllegalStateException("shadow store down"))
					: super.decideAsync(requests, operation);
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
