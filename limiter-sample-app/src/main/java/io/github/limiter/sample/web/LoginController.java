package io.github.limiter.sample.web;

import java.util.Map;

import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

import io.github.limiter.RateLimitExceededException;
import io.github.limiter.spring.annotation.RateLimit;

/**
 * Seed 002: more than 3 failed logins for one user within a minute asks for a captcha. Only failed logins count
 * ({@code recordOn}); the limit is checked before the attempt runs. Beside it, every attempt counts against a per-IP
 * limit.
 */
@RestController
class LoginController {

	private static final Map<String, String> PASSWORDS = Map.of("alice", "secret", "bob", "hunter2");

	@PostMapping("/login")
	@RateLimit(name = "login-failures", key = "#username", policy = "login-failures", recordOn = BadCredentials.class,
			fallback = "refused")
	@RateLimit(name = "login-per-ip", key = "#ip", policy = "login-per-ip", fallback = "refused")
	ResponseEntity<Map<String, Object>> login(@RequestParam String username, @RequestParam String password) {
		if (!password.equals(PASSWORDS.get(username))) {
			throw new BadCredentials();
		}
		return ResponseEntity.ok(Body.of("user", username, "loggedIn", true));
	}

	ResponseEntity<Map<String, Object>> refused(String username, String password, RateLimitExceededException rejection) {
		long retryAfter = Math.max(1, (rejection.getDecision().retryAfter().toMillis() + 999) / 1000);
		io.github.limiter.Decision.Origin origin = rejection.getDecision().origin();
		if (origin == io.github.limiter.Decision.Origin.UNDECIDED || origin == io.github.limiter.Decision.Origin.FAIL_CLOSED) {
			// Nobody counted anything: the limits could not be checked in time, which is not the user's doing.
			return ResponseEntity.status(HttpStatus.TOO_MANY_REQUESTS)
				.header("Retry-After", Long.toString(retryAfter))
				.body(Body.of("captchaRequired", false, "message",
						"Logins are briefly unavailable; retry in " + retryAfter + " s"));
		}
		boolean failures = rejection.getDecision().limitName().equals("login-failures");
		return ResponseEntity.status(HttpStatus.TOO_MANY_REQUESTS)
			.header("Retry-After", Long.toString(retryAfter))
			.body(Body.of("captchaRequired", failures, "message",
					failures ? "Too many failed logins for " + username + ": solve the captcha, or retry in " + retryAfter + " s"
							: "Too many login attempts from your address; retry in " + retryAfter + " s"));
	}

	@org.springframework.web.bind.annotation.ExceptionHandler(BadCredentials.class)
	ResponseEntity<Map<String, Object>> badCredentials() {
		return ResponseEntity.status(HttpStatus.UNAUTHORIZED).body(Map.of("loggedIn", false));
	}

	static class BadCredentials extends RuntimeException {

		private static final long serialVersionUID = 1L;

		BadCredentials() {
			super("bad credentials");
		}

	}

}
