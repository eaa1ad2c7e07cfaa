package io.github.limiter.spring.interceptor;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.slf4j.MDC;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.mock.web.MockHttpServletRequest;
import org.springframework.security.authentication.TestingAuthenticationToken;
import org.springframework.security.core.Authentication;
import org.springframework.security.core.context.SecurityContextHolder;
import org.springframework.web.context.request.RequestAttributes;
import org.springframework.web.context.request.RequestContextHolder;
import org.springframework.web.context.request.ServletRequestAttributes;

import io.github.limiter.spring.annotation.RateLimit;
import io.github.limiter.testsupport.TestRedis;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A limited method returning a {@code CompletionStage} sees its caller's request attributes, security context and
 * MDC on every backend: at once on the local backend, after Redis answered on another thread on Redis.
 */
class StageContextTests {

	@AfterEach
	void clear() {
		MDC.clear();
		SecurityContextHolder.clearContext();
		RequestContextHolder.resetRequestAttributes();
	}

	@ParameterizedTest
	@ValueSource(strings = { "local", "redis" })
	void theMethodBodyRunsInTheCallersContext(String backend) throws Exception {
		try (ConfigurableApplicationContext context = new SpringApplicationBuilder(Application.class)
			.web(WebApplicationType.NONE)
			.properties("limiter.backend=" + backend, "spring.data.redis.host=127.0.0.1",
					"spring.data.redis.port=" + (backend.equals("redis") ? TestRedis.standalone().port() : 1),
					"limiter.key-prefix=" + TestRedis.uniquePrefix(), "spring.main.banner-mode=off",
					// The first call also connects: give it time, so that it is decided by Redis, not the guard.
					"limiter.failure.deadline=5s", "limiter.failure.max-deadline=5s")
			.run()) {
			Reports reports = context.getBean(Reports.class);
			for (int i = 0; i < 5; i++) {
				MockHttpServletRequest request = new MockHttpServletRequest();
				request.setAttribute("tenant", "acme-" + i);
				RequestContextHolder.setRequestAttributes(new ServletRequestAttributes(request));
				SecurityContextHolder.getContext().setAuthentication(new TestingAuthenticationToken("alice", "pw", List.of()));
				MDC.put("trace", "trace-" + i);
				String seen = reports.build().get(10, TimeUnit.SECONDS);
				assertThat(seen).as("call %d on %s", i, backend).isEqualTo("acme-" + i + " alice trace-" + i);
			}
		}
	}

	@Configuration(proxyBeanMethods = false)
	@EnableAutoConfiguration
	@Import(Reports.class)
	static class Application {

	}

	static class Reports {

		@RateLimit(name = "reports", max = "1000", window = "1m")
		public CompletableFuture<String> build() {
			RequestAttributes attributes = RequestContextHolder.getRequestAttributes();
			Object tenant = (attributes != null) ? attributes.getAttribute("tenant", RequestAttributes.SCOPE_REQUEST) : null;
			Authentication user = SecurityContextHolder.getContext().getAuthentication();
			return CompletableFuture.completedFuture(tenant + " " + ((user != null) ? user.getName() : null) + " "
					+ MDC.get("trace"));
		}

	}

}
