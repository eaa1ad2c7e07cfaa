package io.github.limiter.spring.autoconfigure;

import java.util.concurrent.CompletableFuture;

import org.junit.jupiter.api.Test;
import org.springframework.aot.generate.ClassNameGenerator;
import org.springframework.aot.generate.DefaultGenerationContext;
import org.springframework.aot.generate.GeneratedFiles.Kind;
import org.springframework.aot.generate.InMemoryGeneratedFiles;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.context.aot.ApplicationContextAotGenerator;
import org.springframework.context.annotation.AnnotationConfigUtils;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.support.GenericApplicationContext;
import org.springframework.javapoet.ClassName;

import io.github.limiter.spring.annotation.RateLimit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * An application with the starter, a limited bean and the health contribution can be processed ahead of time (Spring
 * AOT, as {@code spring-boot:process-aot} and native images do): every bean the starter registers can be written as
 * code.
 */
class AheadOfTimeProcessingTests {

	@Test
	void theStarterCanBeProcessedAheadOfTime() {
		InMemoryGeneratedFiles files = new InMemoryGeneratedFiles();
		DefaultGenerationContext generation = new DefaultGenerationContext(
				new ClassNameGenerator(ClassName.get(Application.class)), files);
		try (GenericApplicationContext context = new GenericApplicationContext()) {
			AnnotationConfigUtils.registerAnnotationConfigProcessors(context);
			context.registerBean(Application.class);
			new ApplicationContextAotGenerator().processAheadOfTime(context, generation);
			generation.writeGeneratedContent();
		}
		assertThat(files.getGeneratedFiles(Kind.SOURCE)).isNotEmpty()
			.anySatisfy((path, source) -> assertThat(source.toString()).contains("rateLimiterHealthIndicator"));
	}

	@Configuration(proxyBeanMethods = false)
	@ImportAutoConfiguration({ RateLimiterAutoConfiguration.class, RateLimiterHealthAutoConfiguration.class })
	static class Application {

		@org.springframework.context.annotation.Bean
		Reports reports() {
			return new Reports();
		}

	}

	static class Reports {

		@RateLimit(name = "reports", max = "5", window = "1m")
		public CompletableFuture<String> build() {
			return CompletableFuture.completedFuture("report");
		}

	}

}
