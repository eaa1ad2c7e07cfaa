package io.github.limiter.sample;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;

import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;

import static org.assertj.core.api.Assertions.assertThat;

@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class SampleApplicationTests {

	@LocalServerPort
	int port;

	private final HttpClient client = HttpClient.newHttpClient();

	private HttpResponse<String> get(String path) throws Exception {
		return this.client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + this.port + path)).build(),
				HttpResponse.BodyHandlers.ofString());
	}

	@Test
	void greetingTurnsInto429AfterTheBurst() throws Exception {
		for (int i = 4; i >= 0; i--) {
			HttpResponse<String> response = get("/hello");
			assertThat(response.statusCode()).isEqualTo(200);
			String remaining = "\"greeting\";r=" + i + ";";
			assertThat(response.headers().firstValue("RateLimit")).hasValueSatisfying(
					value -> assertThat(value).startsWith(remaining));
		}
		HttpResponse<String> limited = get("/hello");
		assertThat(limited.statusCode()).isEqualTo(429);
		assertThat(limited.headers().firstValue("Retry-After")).hasValue("1");
		assertThat(limited.headers().firstValue("RateLimit-Policy")).hasValue("\"greeting\";q=5;w=5");
		assertThat(limited.body()).contains("\"title\":\"Too Many Requests\"");

		assertThat(get("/actuator/ratelimiters").body()).contains("\"name\":\"greeting\"").contains("\"backend\":\"local\"");
		assertThat(get("/actuator/metrics/limiter.decisions?tag=limit:greeting&tag=outcome:blocked").body())
			.contains("\"value\":1.0");
	}

}
