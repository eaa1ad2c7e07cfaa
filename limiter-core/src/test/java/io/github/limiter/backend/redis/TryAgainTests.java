package io.github.limiter.backend.redis;

import java.io.IOException;
import java.util.concurrent.CompletionException;

import org.junit.jupiter.api.Test;

import io.github.limiter.spi.BackendException;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A call is sent again only when Redis refused it without running it, as Redis's own reply says: never because a
 * caller's key, which the backend's messages name, holds the same words.
 */
class TryAgainTests {

	@Test
	void redisRefusalsAndRedirectionsAreSentAgain() {
		assertThat(RedisScriptBackend.tryAgain(new CompletionException(
				new IllegalStateException("TRYAGAIN Multiple keys request during rehashing of slot")))).isTrue();
		assertThat(RedisScriptBackend.tryAgain(new BackendException("Redis could not decide script over [a, b]: "
				+ "MOVED 7 127.0.0.1:7200", new IllegalStateException("MOVED 7 127.0.0.1:7200")))).isTrue();
		assertThat(RedisScriptBackend.tryAgain(new IllegalStateException("ASK 7 127.0.0.1:7201"))).isTrue();
	}

	@Test
	void aKeyThatReadsLikeARefusalIsNotOne() {
		// Redis ran this call and its reply was lost: sending it again would charge every caller twice.
		assertThat(RedisScriptBackend.tryAgain(new BackendException(
				"Redis could not decide script over [TRYAGAIN , MOVED 7 127.0.0.1:7200, bob]: Connection reset by peer",
				new IOException("Connection reset by peer")))).isFalse();
		assertThat(RedisScriptBackend.tryAgain(new IllegalStateException("ERR a message about TRYAGAIN"))).isFalse();
		assertThat(RedisScriptBackend.tryAgain(new IllegalStateException("ERR see MOVED 7 127.0.0.1:7200"))).isFalse();
	}

}
