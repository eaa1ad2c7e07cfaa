package io.github.limiter.spring.interceptor;

import java.util.List;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.mock.web.MockHttpServletRequest;
import org.springframework.mock.web.MockHttpServletResponse;
import org.springframework.security.authentication.TestingAuthenticationToken;
import org.springframework.security.core.context.SecurityContextHolder;
import org.springframework.web.context.request.RequestContextHolder;
import org.springframework.web.context.request.ServletRequestAttributes;

import io.github.limiter.RateLimitExceededException;
import io.github.limiter.spring.annotation.RateLimit;
import io.github.limiter.spring.autoconfigure.RateLimiterAutoConfiguration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * Keys from who is calling: the authenticated principal, the request and the client IP.
 */
class CallerKeyTests {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(RateLimiterAutoConfiguration.class))
		.withBean(Api.class)
		.withPropertyValues("limiter.backend=local");

	@AfterEach
	void clear() {
		SecurityContextHolder.clearContext();
		RequestContextHolder.resetRequestAttributes();
	}

	private static MockHttpServletResponse request(String remoteAddress, String tenant) {
		return request(remoteAddress, tenant, null);
	}

	/** A request whose handler, as Spring MVC chose it, is the named method of {@link Api}. */
	private static MockHttpServletResponse request(String remoteAddress, String tenant, String handler) {
		MockHttpServletRequest request = new MockHttpServletRequest();
		if (handler != null) {
			request.setAttribute(org.springframework.web.servlet.HandlerMapping.BEST_MATCHING_HANDLER_ATTRIBUTE,
					new org.springframework.web.method.HandlerMethod(new Api(),
						org.springframework.util.ReflectionUtils.findMethod(Api.class, handler)));
		}
		request.setRemoteAddr(remoteAddress);
		request.addHeader("X-Tenant", tenant);
		MockHttpServletResponse response = new MockHttpServletResponse();
		RequestContextHolder.setRequestAttributes(new ServletRequestAttributes(request, response));
		return response;
	}

	@Test
	void perAuthenticatedPrincipal() {
		this.runner.run(context -> {
			Api api = context.getBean(Api.class);
			SecurityContextHolder.getContext().setAuthentication(new TestingAuthenticationToken("alice", "pw", List.of()));
			api.perUser();
			assertThatExceptionOfType(RateLimitExceededException.class).isThrownBy(api::perUser);
			SecurityContextHolder.getContext().setAuthentication(new TestingAuthenticationToken("bob", "pw", List.of()));
			api.perUser();
		});
	}

	@Test
	void perRequestHeaderAndPerClientIp() {
		this.runner.run(context -> {
			Api api = context.getBean(Api.class);
			MockHttpServletResponse response = request("10.0.0.1", "acme", "perTenant");
			api.perTenant();
			assertThat(response.getHeader("RateLimit")).isEqualTo("\"Api.perTenant\";r=0;t=60");
			assertThat(response.getHeader("RateLimit-Policy")).isEqualTo("\"Api.perTenant\";q=1;w=60");
			assertThatExceptionOfType(RateLimitExceededException.class).isThrownBy(api::perTenant);
			request("10.0.0.1", "globex");
			api.perTenant();

			request("10.0.0.1", "acme");
			api.perIp();
			assertThatExceptionOfType(RateLimitExceededException.class).isThrownBy(api::perIp);
			request("10.0.0.2", "acme");
			api.perIp();
		});
	}

	@Test
	void anIpv6ClientIsKeyedByItsNetworkWhateverTheNotation() {
		// One host is given a /64 and may use any address in it: keyed per address, it would have 2^64 buckets.
		this.runner.run(context -> {
			Api api = context.getBean(Api.class);
			request("2001:db8:1:2::1", "acme");
			api.perIp();
			request("2001:db8:1:2:aaaa:bbbb:cccc:dddd", "acme");
			assertThatExceptionOfType(RateLimitExceededException.class).as("another address of the same /64")
				.isThrownBy(api::perIp);
			request("2001:DB8:1:2:0:0:0:ffff%eth0", "acme");
			assertThatExceptionOfType(RateLimitExceededException.class).as("another notation of the same network")
				.isThrownBy(api::perIp);
			request("2001:db8:1:3::1", "acme");
			api.perIp();
			// A servlet container writes the loopback in full, a reactive server compressed: one client either way.
			request("0:0:0:0:0:0:0:1", "acme");
			api.perIp();
			request("::1", "acme");
			assertThatExceptionOfType(RateLimitExceededException.class).isThrownBy(api::perIp);
			// An IPv4 client reaching a dual-stack socket is its IPv4 address.
			request("192.0.2.7", "acme");
			api.perIp();
			request("::ffff:192.0.2.7", "acme");
			assertThatExceptionOfType(RateLimitExceededException.class).isThrownBy(api::perIp);
		});
	}

	@Test
	void theIpv6NetworkLengthIsASetting() {
		this.runner.withPropertyValues("limiter.ipv6-prefix-length=128").run(context -> {
			Api api = context.getBean(Api.class);
			request("2001:db8:1:2::1", "acme");
			api.perIp();
			request("2001:db8:1:2::2", "acme");
			api.perIp();
			request("2001:db8:1:2:0::1", "acme");
			assertThatExceptionOfType(RateLimitExceededException.class).isThrownBy(api::perIp);
		});
		this.runner.withPropertyValues("limiter.ipv6-prefix-length=129").run(context -> assertThat(context)
			.getFailure()
			.rootCause()
			.hasMessage("Invalid limiter.ipv6-prefix-length = '129': must be between 1 and 128 (64 keys a client by its"
					+ " host's network, 128 by its address)"));
	}

	@Test
	void headersOnAdmittedResponsesCanBeSwitchedOff() {
		this.runner.withPropertyValues("limiter.headers.enabled=false").run(context -> {
			MockHttpServletResponse response = request("10.0.0.1", "acme", "perTenant");
			context.getBean(Api.class).perTenant();
			assertThat(response.getHeader("RateLimit")).isNull();
		});
	}

	@Test
	void aLimitedMethodThatIsNotTheHandlerLeavesTheResponseAlone() {
		this.runner.run(context -> {
			MockHttpServletResponse response = request("10.0.0.1", "acme", "perIp");
			context.getBean(Api.class).perTenant();
			assertThat(response.getHeaderNames()).as("a service called by the handler").isEmpty();
		});
	}

	@Test
	void aPrincipalIsKeyedByItsNameNotByItsSessionDetails() {
		this.runner.run(context -> {
			Api api = context.getBean(Api.class);
			TestingAuthenticationToken first = new TestingAuthenticationToken("alice", "pw", List.of());
			first.setDetails("session 1");
			SecurityContextHolder.getContext().setAuthentication(first);
			api.perPrincipal();
			TestingAuthenticationToken second = new TestingAuthenticationToken("alice", "pw", List.of());
			second.setDetails("session 2");
			SecurityContextHolder.getContext().setAuthentication(second);
			assertThatExceptionOfType(RateLimitExceededException.class).as("alice again, in another session")
				.isThrownBy(api::perPrincipal);
		});
	}

	static class Api {

		@RateLimit(key = "#principal?.name", max = "1", window = "1m")
		public void perUser() {
		}

		@RateLimit(key = "#request.getHeader('X-Tenant')", max = "1", window = "1m")
		public void perTenant() {
		}

		@RateLimit(key = "#ip", max = "1", window = "1m")
		public void perIp() {
		}

		@RateLimit(key = "#principal", max = "1", window = "1m")
		public void perPrincipal() {
		}

	}

}
