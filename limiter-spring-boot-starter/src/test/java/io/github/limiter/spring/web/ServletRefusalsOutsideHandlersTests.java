package io.github.limiter.spring.web;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import jakarta.servlet.DispatcherType;
import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServletRequest;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.core.Ordered;
import org.springframework.stereotype.Service;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

import io.github.limiter.algorithm.Algorithm;
import io.github.limiter.spring.annotation.RateLimit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A limited method that a servlet filter calls (as Spring Security's chain calls a {@code UserDetailsService}) is
 * refused with the same 429 as a limited handler, not the container's 500; a key that cannot be used is the same 400;
 * a failure that is not the limiter's is left to the container.
 */
@SpringBootTest(classes = ServletRefusalsOutsideHandlersTests.Application.class,
		webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
		properties = { "limiter.backend=local", "limiter.empty-key=reject" })
class ServletRefusalsOutsideHandlersTests {

	@LocalServerPort
	int port;

	private final HttpClient http = HttpClient.newHttpClient();

	private HttpResponse<String> get(String path) throws IOException, InterruptedException {
		return this.http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + this.port + path)).build(),
				HttpResponse.BodyHandlers.ofString());
	}

	@Test
	void aRefusalInAFilterIsTheLimitersTooManyRequests() throws Exception {
		HttpResponse<String> admitted = get("/gated/hello?user=ann");
		assertThat(admitted.statusCode()).isEqualTo(200);
		assertThat(admitted.body()).isEqualTo("hello");
		HttpResponse<String> refused = get("/gated/hello?user=ann");
		assertThat(refused.statusCode()).isEqualTo(429);
		assertThat(refused.headers().firstValue("Content-Type")).hasValueSatisfying(
				(type) -> assertThat(type).startsWith("application/problem+json"));
		assertThat(Long.parseLong(refused.headers().firstValue("Retry-After").orElseThrow())).isBetween(1L, 60L);
		assertThat(refused.headers().allValues("RateLimit-Policy")).containsExactly("\"gate\";q=1;w=60");
		assertThat(refused.headers().allValues("RateLimit")).hasSize(1)
			.allSatisfy((field) -> assertThat(field).startsWith("\"gate\";r=0;t="));
		assertThat(refused.body()).startsWith("{\"type\":\"about:blank\",\"title\":\"Too Many Requests\",\"status\":429,")
			.contains("\"detail\":\"Rate limit 'gate' exceeded")
			.contains("\"instance\":\"/gated/hello\"")
			.contains("\"limit\":\"gate\"")
			.containsPattern("\"retryAfterSeconds\":[0-9]+}$");
		assertThat(get("/gated/hello?user=bob").statusCode()).as("another key has its own permit").isEqualTo(200);
	}

	@Test
	void aKeyThatCannotBeUsedInAFilterIsTheLimitersBadRequest() throws Exception {
		HttpResponse<String> response = get("/gated/hello");
		assertThat(response.statusCode()).isEqualTo(400);
		assertThat(response.body()).contains("\"title\":\"Rate limit key missing\"").contains("\"status\":400")
			.doesNotContain("#user");
	}

	@Test
	void aRefusalInAFilterOnAnAsynchronousHandlersSecondDispatchIsTheLimitersTooManyRequests() throws Exception {
		// The filter runs on both dispatches of an asynchronous handler, as Spring Security's chain does: the first
		// takes the one permit, the second is refused.
		HttpResponse<String> refused = get("/twice/later?user=dee");
		assertThat(refused.statusCode()).isEqualTo(429);
		assertThat(refused.headers().allValues("RateLimit-Policy")).containsExactly("\"gate\";q=1;w=60");
		assertThat(members(refused.body())).containsEntry("instance", "\"/twice/later\"");
	}

	@Test
	void aLimitNamedOutsideAsciiIsWrittenInAnyCharset() throws Exception {
		assertThat(get("/umlaut/hello").statusCode()).isEqualTo(200);
		HttpResponse<String> refused = get("/umlaut/hello?writer=true");
		assertThat(refused.statusCode()).isEqualTo(429);
		assertThat(refused.headers().firstValue("Content-Length")).hasValue(Integer.toString(refused.body().length()));
		assertThat(refused.body()).matches("\\p{ASCII}*").contains("\"limit\":\"gr\\u00fc\\u00dfe\"");
	}

	@Test
	void aFailureThatIsNotTheLimitersIsLeftToTheContainer() throws Exception {
		assertThat(get("/broken").statusCode()).isEqualTo(500);
	}

	@Test
	void theAnswerIsTheOneAHandlersRefusalGets() throws Exception {
		assertThat(get("/handled").statusCode()).isEqualTo(200);
		HttpResponse<String> handled = get("/handled");
		assertThat(get("/gated/hello?user=cy").statusCode()).isEqualTo(200);
		HttpResponse<String> filtered = get("/gated/hello?user=cy");
		assertThat(filtered.statusCode()).isEqualTo(handled.statusCode()).isEqualTo(429);
		// The same members, whichever wrote them (Spring's JSON leaves out a type of about:blank, and orders the
		// members as its Jackson does): only the limit's name, the path and the seconds differ.
		Map<String, String> fromFilter = members(filtered.body());
		Map<String, String> fromHandler = members(handled.body());
		fromHandler.putIfAbsent("type", "\"about:blank\"");
		assertThat(fromFilter).containsOnlyKeys(fromHandler.keySet());
		assertThat(fromFilter).containsEntry("type", "\"about:blank\"")
			.containsEntry("title", fromHandler.get("title"))
			.containsEntry("status", fromHandler.get("status"))
			.containsEntry("instance", "\"/gated/hello\"")
			.containsEntry("limit", "\"gate\"");
		assertThat(fromHandler).containsEntry("instance", "\"/handled\"").containsEntry("limit", "\"handled\"");
		assertThat(fromFilter.get("detail").replace("gate", "L").replaceAll("[0-9]+", "N"))
			.isEqualTo(fromHandler.get("detail").replace("handled", "L").replaceAll("[0-9]+", "N"));
	}

	/** The members of a flat JSON object, each value as its JSON text. */
	static Map<String, String> members(String json) {
		Map<String, String> members = new LinkedHashMap<>();
		Matcher member = Pattern.compile("\"([^\"]+)\":(\"(?:[^\"\\\\]|\\\\.)*\"|-?[0-9]+)").matcher(json);
		while (member.find()) {
			members.put(member.group(1), member.group(2));
		}
		return members;
	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	@Import({ Gate.class, Controller.class })
	static class Application {

		@Bean
		FilterRegistrationBean<GateFilter> gateFilter(Gate gate) {
			FilterRegistrationBean<GateFilter> registration = new FilterRegistrationBean<>(new GateFilter(gate));
			registration.setDispatcherTypes(DispatcherType.REQUEST, DispatcherType.ASYNC);
			registration.setOrder(0);
			return registration;
		}

	}

	/** Calls a limited method before the handler, as a security filter calls a user lookup. */
	static class GateFilter implements Filter, Ordered {

		private final Gate gate;

		GateFilter(Gate gate) {
			this.gate = gate;
		}

		@Override
		public void doFilter(ServletRequest request, ServletResponse response, FilterChain chain)
				throws IOException, ServletException {
			String path = ((HttpServletRequest) request).getRequestURI();
			if (request.getParameter("writer") != null) {
				// Code before the refusal that took the response's writer (in ISO-8859-1, the servlet default).
				response.getWriter();
			}
			if (path.startsWith("/gated") || path.startsWith("/twice")) {
				this.gate.pass(request.getParameter("user"));
			}
			if (path.startsWith("/umlaut")) {
				this.gate.greet();
			}
			else if (path.startsWith("/broken")) {
				throw new IllegalStateException("not the limiter's");
			}
			chain.doFilter(request, response);
		}

		@Override
		public int getOrder() {
			return 0;
		}

	}

	@Service
	static class Gate {

		// A log, not a window aligned to minutes: two calls a moment apart never fall into two windows.
		@RateLimit(name = "gate", key = "#user", max = "1", window = "1m", algorithm = Algorithm.SLIDING_WINDOW_LOG)
		public void pass(String user) {
		}

		@RateLimit(name = "grüße", max = "1", window = "1m", algorithm = Algorithm.SLIDING_WINDOW_LOG)
		public void greet() {
		}

	}

	@RestController
	static class Controller {

		@GetMapping({ "/gated/hello", "/umlaut/hello" })
		String hello() {
			return "hello";
		}

		@GetMapping("/twice/later")
		java.util.concurrent.Callable<String> later() {
			return () -> "later";
		}

		@GetMapping("/broken")
		String broken() {
			return "never";
		}

		@GetMapping("/handled")
		@RateLimit(name = "handled", max = "1", window = "1m", algorithm = Algorithm.SLIDING_WINDOW_LOG)
		String handled() {
			return "handled";
		}

	}

}
