package io.github.limiter.spring.interceptor;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import io.github.limiter.Decision;
import io.github.limiter.RateLimitExceededException;
import io.github.limiter.RateLimiter;
import io.github.limiter.algorithm.Algorithm;
import io.github.limiter.spring.annotation.RateLimit;
import io.github.limiter.spring.autoconfigure.RateLimiterAutoConfiguration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * {@code @RateLimit} on bean methods, on the local backend: given these annotations and calls, these pass and these
 * are rejected.
 */
class RateLimitAnnotationTests {

	// The limits whose counts the tests assert have no boundaries (sliding logs, buckets): the local backend decides on
	// the real clock, where an epoch-aligned fixed window could start afresh between two calls of a test.
	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(RateLimiterAutoConfiguration.class))
		.withUserConfiguration(Services.class)
		.withPropertyValues("limiter.backend=local", "limiter.policies.tight.max=2", "limiter.policies.tight.window=1h",
				"limiter.policies.tight.algorithm=sliding-window-log", "greeting.max=3", "limiter.policies.warm.max=10",
				"limiter.policies.warm.window=1s", "limiter.policies.warm.capacity=30", "limiter.policies.warm.warmup=4s");

	@Test
	void aPolicyWithAWarmupLetsAColdCallerThroughAtAThirdOfItsBurst() {
		this.runner.run(context -> {
			Orders orders = context.getBean(Orders.class);
			int admitted = 0;
			try {
				while (admitted < 30) {
					orders.warm("cold-user");
					admitted++;
				}
			}
			catch (RateLimitExceededException ex) {
				assertThat(ex.getDecision().limitName()).isEqualTo("Orders.warm");
			}
			// 10 per second with a burst of 30, warming up over 4 s: cold permits cost up to three intervals.
			assertThat(admitted).isEqualTo(13);
			RateLimitOperation operation = context.getBean(RateLimitOperationSource.class).rateLimitedMethods().stream()
				.flatMap(method -> method.operations().stream())
				.filter(candidate -> candidate.limit().name().equals("Orders.warm"))
				.findFirst()
				.orElseThrow();
			assertThat(((io.github.limiter.algorithm.TokenBucket) operation.limit()).warmup()).isEqualTo(Duration.ofSeconds(4));
			assertThat(operation.settingSources()).containsEntry("warmup", "limiter.policies.warm.warmup");
		});
	}

	/** The endpoint's sources name the settings in force: a default that a limit's algorithm ignores is not one. */
	@Test
	void aDefaultThatALimitsAlgorithmIgnoresIsNotListedAmongItsSources() {
		this.runner.withPropertyValues("limiter.defaults.capacity=50", "limiter.defaults.burst=5",
				"limiter.defaults.calendar=day", "limiter.defaults.zone=UTC").run(context -> {
					java.util.function.Function<String, java.util.Map<String, String>> sources = (name) -> context
						.getBean(RateLimitOperationSource.class).rateLimitedMethods().stream()
						.flatMap(method -> method.operations().stream())
						.filter(candidate -> candidate.limit().name().equals(name))
						.findFirst()
						.orElseThrow()
						.settingSources();
					assertThat(sources.apply("per-user")).as("a sliding log")
						.doesNotContainKeys("capacity", "burst", "calendar", "zone")
						.containsEntry("window", "attribute 'window'");
					assertThat(sources.apply("tenant")).as("a token bucket")
						.containsEntry("capacity", "limiter.defaults.capacity")
						.doesNotContainKeys("burst", "calendar", "zone");
				});
	}

	@Test
	void limitsPerArgumentAndRejectsWithTheDecision() {
		this.runner.run(context -> {
			Orders orders = context.getBean(Orders.class);
			assertThat(orders.place("alice")).isEqualTo("placed for alice");
			assertThat(orders.place("alice")).isEqualTo("placed for alice");
			assertThatExceptionOfType(RateLimitExceededException.class).isThrownBy(() -> orders.place("alice"))
				.satisfies(ex -> {
					assertThat(ex.getDecision().limitName()).isEqualTo("Orders.place");
					assertThat(ex.getDecision().remaining()).isZero();
					assertThat(ex.getDecision().retryAfter()).isPositive();
				});
			assertThat(orders.place("bob")).as("another key has its own limit").isEqualTo("placed for bob");
		});
	}

	@Test
	void positionalParametersBeansAndPlaceholders() {
		this.runner.run(context -> {
			Orders orders = context.getBean(Orders.class);
			for (int i = 0; i < 3; i++) {
				assertThat(orders.greet("x")).isEqualTo("hello x");
			}
			assertThatExceptionOfType(RateLimitExceededException.class).isThrownBy(() -> orders.greet("x"));
			orders.byTenant();
			assertThatExceptionOfType(RateLimitExceededException.class).isThrownBy(orders::byTenant)
				.satisfies(ex -> assertThat(ex.getDecision().limitName()).isEqualTo("tenant"));
		});
	}

	@Test
	void severalLimitsAreOneAllOrNothingDecision() {
		this.runner.run(context -> {
			Orders orders = context.getBean(Orders.class);
			RateLimiter limiter = context.getBean(RateLimiter.class);
			assertThat(orders.send("u1", "10.0.0.1")).isTrue();
			assertThatExceptionOfType(RateLimitExceededException.class).isThrownBy(() -> orders.send("u1", "10.0.0.2"))
				.satisfies(ex -> assertThat(ex.getDecision().limitName()).isEqualTo("per-user"));
			// The per-IP limit of 10.0.0.2 consumed nothing: it still admits two calls.
			assertThat(orders.send("u2", "10.0.0.2")).isTrue();
			assertThat(orders.send("u3", "10.0.0.2")).isTrue();
			assertThatExceptionOfType(RateLimitExceededException.class).isThrownBy(() -> orders.send("u4", "10.0.0.2"))
				.satisfies(ex -> assertThat(ex.getDecision().limitName()).isEqualTo("per-ip"));
			assertThat(limiter).isNotNull();
		});
	}

	@Test
	void aFallbackAnswersInsteadOfAnError() {
		this.runner.run(context -> {
			Orders orders = context.getBean(Orders.class);
			assertThat(orders.seckill("sku-1")).isEqualTo("bought sku-1");
			assertThat(orders.seckill("sku-1")).isEqualTo("sold out for now, try again in 60 s (sku-1)");
		});
	}

	@Test
	void aPolicyFromConfigurationSuppliesTheSettings() {
		this.runner.run(context -> {
			Orders orders = context.getBean(Orders.class);
			orders.tight();
			orders.tight();
			assertThatExceptionOfType(RateLimitExceededException.class).isThrownBy(orders::tight)
				.satisfies(ex -> assertThat(ex.getDecision().limit()).isEqualTo(2));
		});
	}

	@Test
	void aPolicyIsRetunedWithoutRecompiling() {
		this.runner.withPropertyValues("limiter.policies.tight.max=3").run(context -> {
			Orders orders = context.getBean(Orders.class);
			for (int i = 0; i < 3; i++) {
				orders.tight();
			}
			assertThatExceptionOfType(RateLimitExceededException.class).isThrownBy(orders::tight);
		});
	}

	@Test
	void aClassLevelLimitAppliesToEveryPublicMethod() {
		this.runner.run(context -> {
			Reports reports = context.getBean(Reports.class);
			reports.daily();
			assertThatExceptionOfType(RateLimitExceededException.class).isThrownBy(reports::daily);
			reports.weekly();
			assertThatExceptionOfType(RateLimitExceededException.class).isThrownBy(reports::weekly);
		});
	}

	@Test
	void aClassLevelLimitLeavesToStringEqualsAndHashCodeAlone() {
		this.runner.run(context -> {
			Reports reports = context.getBean(Reports.class);
			// (A class proxy answers equals and hashCode itself; toString reaches the bean through the advice.)
			for (int i = 0; i < 3; i++) {
				assertThat(reports.toString()).isEqualTo("reports");
				assertThat(reports.equals(reports)).isTrue();
				assertThat(reports.hashCode()).isEqualTo(reports.hashCode());
			}
			reports.daily();
			assertThatExceptionOfType(RateLimitExceededException.class).isThrownBy(reports::daily);
		});
	}

	/**
	 * A class's limit counts requests: the methods Spring's web layer calls around a controller's handlers, through its
	 * proxy, are left out (counted, a failing request took a permit for each, and a limit answered where the exception
	 * handler should).
	 */
	@Test
	void aClassLevelLimitLeavesAControllersExceptionHandlersBindersAndModelAttributesAlone() throws Exception {
		Class<?> controller = LimitedController.class;
		assertThat(RateLimitAnnotationParser.coveredByClassLimit(controller.getMethod("find", String.class))).isTrue();
		assertThat(RateLimitAnnotationParser.coveredByClassLimit(controller.getMethod("named"))).as("a handler named by @ModelAttribute")
			.isTrue();
		assertThat(RateLimitAnnotationParser.coveredByClassLimit(controller.getMethod("badRequest", IllegalArgumentException.class)))
			.isFalse();
		assertThat(RateLimitAnnotationParser.coveredByClassLimit(controller.getMethod("binder",
				org.springframework.web.bind.WebDataBinder.class))).isFalse();
		assertThat(RateLimitAnnotationParser.coveredByClassLimit(controller.getMethod("tenant"))).isFalse();
	}

	@RateLimit(max = "4", window = "1m")
	@org.springframework.web.bind.annotation.RestController
	static class LimitedController {

		@org.springframework.web.bind.annotation.GetMapping("/find")
		public String find(String id) {
			return id;
		}

		@org.springframework.web.bind.annotation.GetMapping("/named")
		@org.springframework.web.bind.annotation.ModelAttribute("named")
		public String named() {
			return "named";
		}

		@org.springframework.web.bind.annotation.ExceptionHandler
		public org.springframework.http.ResponseEntity<String> badRequest(IllegalArgumentException ex) {
			return org.springframework.http.ResponseEntity.badRequest().body(ex.getMessage());
		}

		@org.springframework.web.bind.annotation.InitBinder
		public void binder(org.springframework.web.bind.WebDataBinder binder) {
		}

		@org.springframework.web.bind.annotation.ModelAttribute("tenant")
		public String tenant() {
			return "acme";
		}

	}

	@Test
	void aClassLevelLimitAndTheMethodsOwnAreBothApplied() {
		this.runner.run(context -> {
			Reports reports = context.getBean(Reports.class);
			reports.perUser("a");
			assertThatExceptionOfType(RateLimitExceededException.class).isThrownBy(() -> reports.perUser("b"))
				.satisfies(ex -> assertThat(ex.getDecision().limitName()).isEqualTo("Reports.perUser[class]"));
		});
	}

	@Test
	void aCalendarInTheDefaultsLeavesOtherAlgorithmsAlone() {
		this.runner.withPropertyValues("limiter.defaults.calendar=day").run(context -> {
			assertThat(context).hasNotFailed();
			context.getBean(Orders.class).place("calendar");
		});
	}

	@Test
	void aNullKeyGoesToASharedBucketByDefault() {
		this.runner.run(context -> {
			Orders orders = context.getBean(Orders.class);
			orders.place(null);
			orders.place("");
			assertThatExceptionOfType(RateLimitExceededException.class).isThrownBy(() -> orders.place(null));
		});
	}

	@Test
	void aNullKeyIsRefusedWhenConfigured() {
		this.runner.withPropertyValues("limiter.empty-key=reject").run(context -> {
			Orders orders = context.getBean(Orders.class);
			assertThatExceptionOfType(RateLimitKeyException.class).isThrownBy(() -> orders.place(null))
				.satisfies(problem -> assertThat(problem.getInternalDetail()).contains("evaluated to null"))
				.satisfies(problem -> assertThat(problem.getMessage()).doesNotContain("#customer", "Orders"));
		});
	}

	@Test
	void aCostTakesSeveralPermits() {
		this.runner.run(context -> {
			Orders orders = context.getBean(Orders.class);
			orders.export();
			assertThatExceptionOfType(RateLimitExceededException.class).isThrownBy(orders::export)
				.satisfies(ex -> assertThat(ex.getDecision().remaining()).isEqualTo(2));
		});
	}

	@Test
	void unannotatedMethodsAreNotLimited() {
		this.runner.run(context -> {
			Orders orders = context.getBean(Orders.class);
			for (int i = 0; i < 100; i++) {
				orders.free();
			}
		});
	}

	@Test
	void aQueueingLeakyBucketMakesTheCallerWait() {
		this.runner.run(context -> {
			Orders orders = context.getBean(Orders.class);
			long start = System.nanoTime();
			orders.queued();
			orders.queued();
			long elapsedMillis = (System.nanoTime() - start) / 1_000_000;
			assertThat(elapsedMillis).as("the second call waited for its turn").isGreaterThanOrEqualTo(90);
			assertThat(orders.calls()).containsExactly("queued", "queued");
		});
	}

	@Test
	void maxWaitBoundsTheTurnOfAQueuedCallAndTheRestAreRejectedAtOnce() {
		// One turn every 2 s, five places in the queue, but a caller waits at most 3 s: of five calls arriving
		// together, the first goes at once and the second waits 2 s; the others' turns are 4 s and more away.
		this.runner.run(context -> {
			Orders orders = context.getBean(Orders.class);
			java.util.List<Long> waits = AtOnce.run(5, () -> {
				long begin = System.nanoTime();
				try {
					orders.queuedWithinAWait();
					return (System.nanoTime() - begin) / 1_000_000;
				}
				catch (io.github.limiter.RateLimitExceededException ex) {
					return -1L;
				}
			});
			assertThat(waits).as("admitted calls' waits in ms, -1 for a rejection").filteredOn(wait -> wait < 0).hasSize(3);
			assertThat(waits).filteredOn(wait -> wait >= 0).hasSize(2).allSatisfy(wait -> assertThat(wait).isLessThan(3_000));
			assertThat(orders.calls()).containsExactly("bounded", "bounded");
		});
	}

	@Configuration(proxyBeanMethods = false)
	static class Services {

		@Bean
		Orders orders() {
			return new Orders();
		}

		@Bean
		Reports reports() {
			return new Reports();
		}

		@Bean
		Tenants tenants() {
			return new Tenants();
		}

	}

	static class Tenants {

		public String current() {
			return "acme";
		}

	}

	static class Orders {

		private final List<String> calls = java.util.Collections.synchronizedList(new ArrayList<>());

		public List<String> calls() {
			return this.calls;
		}

		@RateLimit(key = "#customer", max = "2", window = "1m")
		public String place(String customer) {
			return "placed for " + customer;
		}

		@RateLimit(key = "#p0", max = "${greeting.max}", window = "PT1M", algorithm = Algorithm.SLIDING_WINDOW_LOG)
		public String greet(String name) {
			return "hello " + name;
		}

		@RateLimit(name = "tenant", key = "@tenants.current()", max = "1", window = "1h")
		public void byTenant() {
		}

		@RateLimit(name = "per-user", key = "#user", max = "1", window = "1d", algorithm = Algorithm.SLIDING_WINDOW_LOG)
		@RateLimit(name = "per-ip", key = "#ip", max = "2", window = "1d", algorithm = Algorithm.SLIDING_WINDOW_LOG)
		public boolean send(String user, String ip) {
			return true;
		}

		@RateLimit(key = "#sku", max = "1", window = "1m", fallback = "soldOut")
		public String seckill(String sku) {
			return "bought " + sku;
		}

		String soldOut(String sku, RateLimitExceededException rejection) {
			Decision decision = rejection.getDecision();
			long seconds = (decision.retryAfter().toMillis() + 999) / 1000;
			return "sold out for now, try again in " + seconds + " s (" + sku + ")";
		}

		@RateLimit(policy = "tight")
		public void tight() {
		}

		@RateLimit(policy = "warm", key = "#user")
		public void warm(String user) {
		}

		@RateLimit(max = "5", window = "1h", cost = "3")
		public void export() {
		}

		@RateLimit(max = "10", window = "1s", burst = "5", algorithm = Algorithm.LEAKY_BUCKET)
		public void queued() {
			this.calls.add("queued");
		}

		@RateLimit(max = "1", window = "2s", burst = "5", algorithm = Algorithm.LEAKY_BUCKET, maxWait = "3s")
		public void queuedWithinAWait() {
			this.calls.add("bounded");
		}

		public void free() {
		}

	}

	@RateLimit(max = "1", window = "1h")
	static class Reports {

		public void daily() {
		}

		public void weekly() {
		}

		@RateLimit(key = "#user", max = "5", window = "1h")
		public void perUser(String user) {
		}

		@Override
		public String toString() {
			return "reports";
		}

		@Override
		public boolean equals(Object other) {
			return other instanceof Reports;
		}

		@Override
		public int hashCode() {
			return 1;
		}

	}

}
