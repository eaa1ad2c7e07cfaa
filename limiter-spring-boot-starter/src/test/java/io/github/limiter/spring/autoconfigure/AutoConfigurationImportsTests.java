package io.github.limiter.spring.autoconfigure;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfiguration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every class named in the imports file exists and is a public final auto-configuration, so a renamed class cannot
 * silently switch a feature off.
 */
class AutoConfigurationImportsTests {

	@Test
	void everyListedAutoConfigurationLoads() throws IOException, ClassNotFoundException {
		List<String> names;
		try (InputStream in = getClass().getClassLoader()
			.getResourceAsStream("META-INF/spring/org.springframework.boot.autoconfigure.AutoConfiguration.imports")) {
			names = new String(in.readAllBytes(), StandardCharsets.UTF_8).lines()
				.map(String::trim)
				.filter(line -> !line.isEmpty() && !line.startsWith("#"))
				.toList();
		}
		assertThat(names).hasSize(4);
		for (String name : names) {
			Class<?> type = Class.forName(name);
			assertThat(type).hasAnnotation(AutoConfiguration.class).isPublic().isFinal();
		}
	}

	@Test
	void configurationMetadataIsGenerated() throws IOException {
		try (InputStream in = getClass().getClassLoader().getResourceAsStream("META-INF/spring-configuration-metadata.json")) {
			assertThat(in).isNotNull();
			String metadata = new String(in.readAllBytes(), StandardCharsets.UTF_8);
			assertThat(metadata).contains("\"limiter.backend\"", "\"limiter.policies\"", "\"limiter.defaults.window\"",
					"\"limiter.aop.order\"", "\"limiter.empty-key\"", "\"limiter.local.clock\"");
			// The default the metadata shows is the backend's own.
			assertThat(metadata.replaceAll("\\s", "")).containsPattern("\"name\":\"limiter.redis.denial-cache-size\"[^}]*"
					+ "\"defaultValue\":" + io.github.limiter.backend.redis.RedisScriptBackend.DEFAULT_DENIAL_CACHE_SIZE + "\\}");
		}
	}

}
