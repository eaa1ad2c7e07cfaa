package io.github.limiter.backend.redis;

import java.time.Duration;

import org.junit.jupiter.api.Test;

import io.github.limiter.LimitRequest;
import io.github.limiter.algorithm.FixedWindow;
import io.github.limiter.algorithm.TokenBucket;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Keys from hostile input stay short, are the same on every JVM (golden values), and never let input choose the
 * cluster slot.
 */
class KeyLayoutTests {

	private final KeyLayout layout = new KeyLayout("limiter:");

	private final FixedWindow limit = FixedWindow.of("api", 10, Duration.ofMinutes(1));

	private String key(String material) {
		return this.layout.key(LimitRequest.of(this.limit, material));
	}

	@Test
	void keysAreTheSameOnEveryJvm() {
		assertThat(key("alice")).isEqualTo("limiter:{" + KeyLayout.tag("alice") + "}fw:api:alice");
		assertThat(KeyLayout.tag("alice")).isEqualTo("1d940a");
		assertThat(key("x".repeat(4096))).isEqualTo("limiter:{" + KeyLayout.tag(KeyLayout.material("x".repeat(4096)))
				+ "}fw:api:" + KeyLayout.material("x".repeat(4096)));
		assertThat(KeyLayout.material("x".repeat(4096))).isEqualTo("~ouZZ2stGkeiHrAE5-Ik9BHZO4ZfXD7c9MZDVYRPRjj4");
		assertThat(this.layout.key(LimitRequest.of(TokenBucket.of("api", 1, Duration.ofSeconds(1)), "alice")))
			.as("the state's shape is part of the key").contains("}gc:api:");
	}

	@Test
	void hostileMaterialIsStoredShortAndPrintable() {
		for (String hostile : new String[] { "x".repeat(4096), "a\r\nb", "ümlaut😀", "\u0000\u0001", "~abc", " spaced" }) {
			String key = key(hostile);
			assertThat(key.length()).as("length of the key for %s", hostile).isLessThan(80);
			assertThat(key.chars().allMatch(c -> c > 0x20 && c < 0x7f)).as("printable key %s", key).isTrue();
		}
		assertThat(key("a\r\nb")).isNotEqualTo(key("a\nb"));
	}

	@Test
	void keysThatDifferOnlyInALoneSurrogateStayApart() {
		String tail = "x".repeat(100);
		assertThat(key("bob\uD800")).isNotEqualTo(key("bob\uDC00")).isNotEqualTo(key("bob?"));
		assertThat(key(tail + "\uD800")).isNotEqualTo(key(tail + "?"));
		assertThat(key("a\uD800\uDC00")).as("a pair is one code point").isNotEqualTo(key("a\uD800"))
			.isEqualTo(key("a\uD800" + "\uDC00"));
		assertThat(KeyLayout.bytes("bob\uD800")).containsExactly('b', 'o', 'b', 0xed, 0xa0, 0x80);
		assertThat(KeyLayout.bytes("ümlaut😀")).as("well-formed text is its UTF-8")
			.isEqualTo("ümlaut😀".getBytes(java.nio.charset.StandardCharsets.UTF_8));
	}

	@Test
	void inputCannotChooseTheSlot() {
		String hostile = "{pick-this-slot}";
		String key = key(hostile);
		assertThat(KeyLayout.slot(key)).isEqualTo(KeyLayout.slot("{" + KeyLayout.tag(hostile) + "}"));
		assertThat(KeyLayout.slot(key)).isNotEqualTo(KeyLayout.slot("pick-this-slot"));
	}

	@Test
	void ipv4MappedIpv6AddressesStayDistinctClients() {
		assertThat(key("::ffff:10.0.0.1")).isNotEqualTo(key("::ffff:10.0.0.2")).isNotEqualTo(key("10.0.0.1"));
	}

}
