package io.github.limiter.spring.interceptor;

import java.io.File;
import java.net.URL;
import java.net.URLClassLoader;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;

import org.junit.jupiter.api.Test;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import reactor.core.publisher.Mono;

import io.github.limiter.RateLimitExceededException;
import io.github.limiter.spring.annotation.RateLimit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * An application with Reactor but no web framework (a batch job, a message consumer) limits its {@code Mono}
 * methods: run in a class loader that has neither Spring's web modules nor the servlet API.
 */
class NonWebReactiveTests {

	@Test
	void aMonoMethodIsLimitedWithoutAnyWebClassOnTheClasspath() throws Exception {
		List<URL> urls = new ArrayList<>();
		for (String entry : System.getProperty("java.class.path").split(File.pathSeparator)) {
			String name = new File(entry).getName();
			if (!name.startsWith("spring-web") && !name.startsWith("jakarta.servlet") && !name.startsWith("tomcat")
					&& !name.startsWith("spring-boot-web") && !name.startsWith("spring-boot-tomcat")
					&& !name.startsWith("spring-boot-webflux") && !name.startsWith("spring-boot-webmvc")) {
				urls.add(new File(entry).toURI().toURL());
			}
		}
		try (URLClassLoader loader = new URLClassLoader(urls.toArray(URL[]::new), ClassLoader.getPlatformClassLoader())) {
			assertThat(loader.getResource("org/springframework/web/server/ServerWebExchange.class")).isNull();
			Thread thread = Thread.currentThread();
			ClassLoader previous = thread.getContextClassLoader();
			thread.setContextClassLoader(loader);
			try {
				@SuppressWarnings("unchecked")
				Callable<String> run = (Callable<String>) loader.loadClass(Job.class.getName()).getDeclaredConstructor()
					.newInstance();
				assertThat(run.call()).isEqualTo("ok, ok, rejected");
			}
			finally {
				thread.setContextClassLoader(previous);
			}
		}
	}

	/** Runs the application and calls its limited method three times; loaded by the web-less class loader. */
	public static class Job implements Callable<String> {

		@Override
		public String call() {
			try (ConfigurableApplicationContext context = new SpringApplicationBuilder(Application.class)
				.web(WebApplicationType.NONE)
				.properties("limiter.backend=local", "spring.main.banner-mode=off")
				.run()) {
				Feed feed = context.getBean(Feed.class);
				List<String> results = new ArrayList<>();
				for (int i = 0; i < 3; i++) {
					results.add(feed.next()
						.onErrorResume(RateLimitExceededException.class, rejected -> Mono.just("rejected"))
						.block());
				}
				return String.join(", ", results);
			}
		}

	}

	@Configuration(proxyBeanMethods = false)
	@EnableAutoConfiguration
	@Import(Feed.class)
	static class Application {

	}

	static class Feed {

		@RateLimit(name = "feed", max = "2", window = "1m")
		public Mono<String> next() {
			return Mono.just("ok");
		}

	}

}
