package io.github.limiter.guard;

import java.io.IOException;
import java.time.Duration;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.springframework.data.redis.connection.RedisPassword;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import io.github.limiter.backend.redis.spring.SpringDataRedisScriptExecutor;
import io.github.limiter.spi.BackendException;
import io.github.limiter.spi.OccasionalWarning;
import io.github.limiter.testsupport.LoggedWarnings;
import io.github.limiter.testsupport.RedisProcess;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What an operator reads when Redis refuses the limiter: the words of the failure that says what is wrong (Redis's
 * own reply, the address refused), not only the wrappers' "could not decide" and "unable to connect".
 */
class FailureReasonTests {

	@Test
	void aReasonKeepsTheWordsOfTheRootCause() {
		Exception wrapped = new BackendException("Redis could not decide k: Unable to connect to Redis",
				new IllegalStateException("Unable to connect to Redis",
						new IOException("WRONGPASS invalid username-password pair or user is disabled.")));
		assertThat(OccasionalWarning.reason(wrapped)).isEqualTo("Redis could not decide k: Unable to connect to Redis "
				+ "(IOException: WRONGPASS invalid username-password pair or user is disabled.)");
		Exception repeated = new BackendException("Redis could not decide k: WRONGTYPE Operation",
				new IOException("WRONGTYPE Operation"));
		assertThat(OccasionalWarning.reason(repeated)).as("said once")
			.isEqualTo("Redis could not decide k: WRONGTYPE Operation (IOException)");
	}

	/** A wrong password, the commonest misconfiguration, shows in the warning that opens the circuit. */
	@Test
	void aWrongPasswordIsNamedInTheWarning() throws Exception {
		try (RedisProcess redis = RedisProcess.start()) {
			redis.command("CONFIG", "SET", "requirepass", "secret");
			RedisStandaloneConfiguration config = new RedisStandaloneConfiguration("127.0.0.1", redis.port());
			config.setPassword(RedisPassword.of("wrong"));
			LettuceConnectionFactory lettuce = new LettuceConnectionFactory(config);
			lettuce.afterPropertiesSet();
			lettuce.start();
			List<String> warnings;
			try (LoggedWarnings logged = LoggedWarnings.of(GuardedBackend.class);
					GuardedBackend guard = GuardedBackend.builder(SpringDataRedisScriptExecutor.backend(lettuce).build())
						.heartbeat(Duration.ofMillis(200))
						.build()) {
				long giveUp = System.nanoTime() + Duration.ofSeconds(30).toNanos();
				while (logged.messages().isEmpty() && System.nanoTime() < giveUp) {
					Thread.sleep(20);
				}
				warnings = List.copyOf(logged.messages());
			}
			finally {
				lettuce.destroy();
			}
			assertThat(warnings).isNotEmpty();
			// The root cause's own words: Redis's refusal, or, where Lettuce drops the connection on it (seen with Redis
			// 7), Lettuce's; before, only the root cause's class was named.
			assertThat(warnings.get(0)).containsAnyOf("WRONGPASS", "Connection closed prematurely");
		}
	}

}
