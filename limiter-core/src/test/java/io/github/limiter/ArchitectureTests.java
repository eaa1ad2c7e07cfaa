package io.github.limiter;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The core stays free of Spring, and each client's imports stay in its own package.
 */
class ArchitectureTests {

	private static final Path SOURCES = Path.of("src/main/java/io/github/limiter");

	/** Import prefix → the only package directory allowed to use it. */
	private static final Map<String, String> CONFINED = Map.of("import org.springframework.", "backend/redis/spring/",
			"import org.redisson.", "backend/redisson/", "import io.lettuce.", "backend/redis/spring/",
			"import redis.clients.", "(nowhere)");

	@Test
	void clientImportsStayInTheirBackendPackage() throws IOException {
		List<Path> files;
		try (Stream<Path> walk = Files.walk(SOURCES)) {
			files = walk.filter(path -> path.toString().endsWith(".java")).toList();
		}
		assertThat(files).hasSizeGreaterThan(20);
		for (Path file : files) {
			String relative = SOURCES.relativize(file).toString().replace('\\', '/');
			for (String line : Files.readAllLines(file)) {
				CONFINED.forEach((prefix, allowed) -> {
					if (line.startsWith(prefix)) {
						assertThat(relative).as("%s in %s", line, relative).startsWith(allowed);
					}
				});
			}
		}
	}

}
