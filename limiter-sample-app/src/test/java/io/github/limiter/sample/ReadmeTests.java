package io.github.limiter.sample;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The README's commands are the ones CI runs: the test command is in {@code .ci/run}, the run command in the smoke
 * script CI runs, and every request of the walkthrough in the walkthrough script CI runs against the sample.
 */
class ReadmeTests {

	private static final Path ROOT = Path.of("..");

	private static String read(String file) throws IOException {
		return Files.readString(ROOT.resolve(file));
	}

	private static List<String> shellBlocks(String markdown) {
		List<String> blocks = new ArrayList<>();
		Matcher block = Pattern.compile("```sh\\n(.*?)```", Pattern.DOTALL).matcher(markdown);
		while (block.find()) {
			blocks.add(block.group(1));
		}
		return blocks;
	}

	@Test
	void theTestCommandIsWhatCiRuns() throws IOException {
		List<String> blocks = shellBlocks(read("README.md"));
		assertThat(blocks.get(1).trim()).isEqualTo("./mvnw verify");
		assertThat(read(".ci/run")).contains("\n./mvnw verify\n");
	}

	@Test
	void theRunCommandIsWhatTheSmokeTestStarts() throws IOException {
		List<String> blocks = shellBlocks(read("README.md"));
		assertThat(blocks.get(0).trim()).isEqualTo("./mvnw -pl limiter-sample-app -am spring-boot:run");
		assertThat(read("scripts/sample-smoke.sh")).contains("./mvnw -pl limiter-sample-app -am spring-boot:run");
		assertThat(read(".ci/run")).contains("./scripts/sample-smoke.sh");
	}

	@Test
	void everyRequestOfTheWalkthroughIsChecked() throws IOException {
		String walkthrough = shellBlocks(read("README.md")).get(2);
		String script = read("scripts/walkthrough.sh");
		Matcher url = Pattern.compile("localhost:8080(/[^\"'\\s;]*)").matcher(walkthrough);
		int requests = 0;
		while (url.find()) {
			requests++;
			assertThat(script).as("the walkthrough script requests %s", url.group(1)).contains("$base" + url.group(1));
		}
		assertThat(requests).isGreaterThanOrEqualTo(8);
	}

}
