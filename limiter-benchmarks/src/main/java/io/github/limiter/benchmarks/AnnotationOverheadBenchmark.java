package io.github.limiter.benchmarks;

import java.util.concurrent.TimeUnit;

import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import io.github.limiter.spring.annotation.RateLimit;
import io.github.limiter.spring.autoconfigure.RateLimiterAutoConfiguration;

/**
 * What {@code @RateLimit} adds to a call: the same method called directly, and through the proxy with a limit keyed
 * by a SpEL expression on its argument, on the local backend, with a limit that never runs dry.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class AnnotationOverheadBenchmark {

	private ConfigurableApplicationContext context;

	private Greeter proxied;

	private Greeter direct;

	private String user;

	@Setup(Level.Trial)
	public void setUp() {
		this.context = new SpringApplicationBuilder(Application.class).web(WebApplicationType.NONE)
			.properties("limiter.backend=local", "spring.main.banner-mode=off", "logging.level.root=warn")
			.run();
		this.proxied = this.context.getBean(Greeter.class);
		this.direct = new Greeter();
		this.user = "user-42";
		if (!org.springframework.aop.support.AopUtils.isAopProxy(this.proxied)) {
			throw new IllegalStateException("the greeter is not proxied: the benchmark would measure nothing");
		}
	}

	@TearDown(Level.Trial)
	public void tearDown() {
		this.context.close();
	}

	@Benchmark
	public String direct() {
		return this.direct.greet(this.user);
	}

	@Benchmark
	public String annotated() {
		return this.proxied.greet(this.user);
	}

	/** The application: the limiter's auto-configuration and one annotated bean. */
	@Configuration(proxyBeanMethods = false)
	@ImportAutoConfiguration(RateLimiterAutoConfiguration.class)
	public static class Application {

		@Bean
		Greeter greeter() {
			return new Greeter();
		}

	}

	/** The annotated method: a limit per user that a benchmark cannot exhaust. */
	public static class Greeter {

		@RateLimit(name = "greeting", key = "#user", max = "1000000000", window = "1s")
		public String greet(String user) {
			return user;
		}

	}

}
