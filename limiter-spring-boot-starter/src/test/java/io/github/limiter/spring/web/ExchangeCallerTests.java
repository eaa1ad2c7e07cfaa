package io.github.limiter.spring.web;

import java.util.List;

import org.junit.jupiter.api.Test;
import org.springframework.mock.http.server.reactive.MockServerHttpRequest;
import org.springframework.mock.web.server.MockServerWebExchange;
import org.springframework.security.authentication.AnonymousAuthenticationToken;
import org.springframework.security.authentication.TestingAuthenticationToken;
import org.springframework.security.core.authority.AuthorityUtils;
import org.springframework.web.server.ServerWebExchange;

import reactor.core.publisher.Mono;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The principal a WebFlux request gives {@code #principal} is the one a servlet request gives: a user who signed in,
 * never Spring Security's anonymous token, which would put every anonymous caller in one bucket.
 */
class ExchangeCallerTests {

	private static ServerWebExchange signedInAs(java.security.Principal principal) {
		return MockServerWebExchange.from(MockServerHttpRequest.get("/orders")).mutate()
			.principal(Mono.just(principal))
			.build();
	}

	@Test
	void anAuthenticatedUserIsThePrincipal() {
		TestingAuthenticationToken alice = new TestingAuthenticationToken("alice", "pw", List.of());
		alice.setAuthenticated(true);
		assertThat(ExchangeCaller.of(signedInAs(alice)).block().principal()).isSameAs(alice);
	}

	@Test
	void anAnonymousCallerHasNoPrincipal() {
		AnonymousAuthenticationToken anonymous = new AnonymousAuthenticationToken("key", "anonymousUser",
				AuthorityUtils.createAuthorityList("ROLE_ANONYMOUS"));
		assertThat(ExchangeCaller.of(signedInAs(anonymous)).block().principal()).isNull();
	}

	@Test
	void anAuthenticationNotAuthenticatedIsNoPrincipal() {
		TestingAuthenticationToken unchecked = new TestingAuthenticationToken("mallory", "pw", List.of());
		unchecked.setAuthenticated(false);
		assertThat(ExchangeCaller.of(signedInAs(unchecked)).block().principal()).isNull();
	}

	@Test
	void noPrincipalIsNone() {
		ServerWebExchange exchange = MockServerWebExchange.from(MockServerHttpRequest.get("/orders"));
		assertThat(ExchangeCaller.of(exchange).block().principal()).isNull();
	}

}
