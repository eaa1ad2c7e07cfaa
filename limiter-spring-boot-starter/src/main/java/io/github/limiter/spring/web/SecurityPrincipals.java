package io.github.limiter.spring.web;

import java.security.Principal;

import org.springframework.security.authentication.AnonymousAuthenticationToken;
import org.springframework.security.core.Authentication;
import org.springframework.security.core.context.SecurityContextHolder;

/**
 * The authenticated principal from Spring Security. Loaded only when Spring Security is present.
 */
final class SecurityPrincipals {

	private SecurityPrincipals() {
	}

	static Principal current() {
		return authenticated(SecurityContextHolder.getContext().getAuthentication());
	}

	/**
	 * A principal as a limit keys it: none for Spring Security's anonymous token or an authentication that is not
	 * authenticated, so that anonymous callers follow {@code limiter.empty-key} rather than share one user's bucket.
	 * @param principal the principal, or {@code null}
	 * @return the principal, or {@code null}
	 */
	static Principal authenticated(Principal principal) {
		if (principal instanceof Authentication authentication && (!authentication.isAuthenticated()
				|| authentication instanceof AnonymousAuthenticationToken)) {
			return null;
		}
		return principal;
	}

}
