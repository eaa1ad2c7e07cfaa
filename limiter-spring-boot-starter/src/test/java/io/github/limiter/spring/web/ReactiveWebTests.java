package io.github.limiter.spring.web;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

import io.github.limiter.Decision;
import io.github.limiter.LimitRequest;
import io.github.limiter.Operation;
import io.github.limiter.spring.annotation.RateLimit;
import io.github.limiter.testsupport.LocalDecorator;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Reactive WebFlux endpoints behave like their MVC twins (429, headers, keys from the exchange) and never block an
 * event-loop thread: with a backend that takes 300 ms to answer and a single event-loop thread, eight concurrent
 * requests finish in about 300 ms, not 2.4 s; and the blocking {@code decide} is never called on a non-blocking
 * thread.
 */
@SpringBootTest(classes = ReactiveWebTests.Application.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
		properties = { "spring.main.web-application-type=reactive", "reactor.netty.ioWorkerCount=1",
				"limiter.empty-key=reject", "limiter.failure.deadline=2s", "limiter.failure.max-deadline=2s" })
class ReactiveWebTests {

	@LocalServerPort
	int port;

	@org.springframework.beans.factory.annotation.Autowired
	org.springframework.context.ApplicationContext context;

	private final HttpClient http = HttpClient.newHttpClient();

	private CompletableFuture<HttpResponse<String>> get(String path) {
		return this.http.sendAsync(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + this.port + path)).build(),
				HttpResponse.BodyHandlers.ofString());
	}

	@Test
	void aReactiveEndpointIsLimitedPerClientIpLikeItsMvcTwin() throws Exception {
		HttpResponse<String> first = get("/mono/ip").get(5, TimeUnit.SECONDS);
		assertThat(first.statusCode()).isEqualTo(200);
		assertThat(first.headers().allValues("RateLimit-Policy")).containsExactly("\"by-ip\";q=1;w=60");
		assertThat(first.headers().allValues("RateLimit")).containsExactly("\"by-ip\";r=0;t=60");
		HttpResponse<String> limited = get("/mono/ip").get(5, TimeUnit.SECONDS);
		assertThat(limited.statusCode()).isEqualTo(429);
		assertThat(limited.headers().allValues("RateLimit-Policy")).containsExactly("\"by-ip\";q=1;w=60");
		assertThat(limited.body()).contains("\"status\":429");
	}

	@Test
	void aLimitedServiceCalledByAnUnlimitedHandlerSetsNoFields() throws Exception {
		HttpResponse<String> response = get("/unlimited").get(5, TimeUnit.SECONDS);
		assertThat(response.statusCode()).isEqualTo(200);
		assertThat(response.body()).isEqualTo("service");
		assertThat(response.headers().allValues("RateLimit-Policy")).isEmpty();
	}

	@Test
	void aPlainHandlerIsRefusedOnTheEventLoopInsteadOfBlockingIt() throws Exception {
		// Reactor Netty runs handlers on its event loop; with Tomcat on the classpath too, Boot 3.5 serves WebFlux
		// on Tomcat's worker threads, where waiting is allowed.
		Object server = this.context.getClass().getMethod("getWebServer").invoke(this.context);
		boolean eventLoop = server.getClass().getSimpleName().startsWith("Netty");
		long asked = SlowBackend.decisions;
		HttpResponse<String> response = get("/plain").get(5, TimeUnit.SECONDS);
		assertThat(SlowBackend.blockingCallsOnNonBlockingThreads).isZero();
		if (eventLoop) {
			assertThat(response.statusCode()).isEqualTo(500);
			assertThat(SlowBackend.decisions).as("nothing was decided, so nothing was taken").isEqualTo(asked);
		}
		else {
			assertThat(response.statusCode()).isEqualTo(200);
		}
	}

	@Test
	void aSlowBackendNeverBlocksTheEventLoop() throws Exception {
		long start = System.nanoTime();
		List<CompletableFuture<HttpResponse<String>>> responses = new ArrayList<>();
		for (int i = 0; i < 8; i++) {
			responses.add(get("/slow/" + i));
		}
		for (CompletableFuture<HttpResponse<String>> response : responses) {
			assertThat(response.get(10, TimeUnit.SECONDS).statusCode()).isEqualTo(200);
		}
		long millis = (System.nanoTime() - start) / 1_000_000;
		assertThat(millis).as("8 requests of a 300 ms backend on one event-loop thread").isLessThan(1500);
		assertThat(SlowBackend.blockingCallsOnNonBlockingThreads).isZero();
	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	@Import({ Controller.class, LimitedService.class })
	static class Application {

		@Bean
		SlowBackend slowBackend() {
			return new SlowBackend();
		}

	}

	/** Answers after 300 ms, from another thread, like a slow Redis; records blocking use on event loops. */
	static class SlowBackend extends LocalDecorator {

		static volatile int blockingCallsOnNonBlockingThreads;

		/** Decisions on the application's limits (the guard's heartbeat probes are not counted: they come any time). */
		static volatile long decisions;

		@Override
		public CompletionStage<Decision> decideAsync(List<LimitRequest> requests, Operation operation) {
			if (!requests.get(0).limit().name().equals("limiter-probe")) {
				decisions++;
			}
			boolean slow = requests.get(0).limit().name().equals("slow");
			Decision decision = this.local.decide(requests, operation);
			if (!slow) {
				return CompletableFuture.completedFuture(decision);
			}
			return CompletableFuture.supplyAsync(() -> decision,
					CompletableFuture.delayedExecutor(300, TimeUnit.MILLISECONDS));
		}

		@Override
		public Decision decide(List<LimitRequest> requests, Operation operation) {
			if (Schedulers.isInNonBlockingThread()) {
				blockingCallsOnNonBlockingThreads++;
			}
			return super.decide(requests, operation);
		}

	}

	@org.springframework.stereotype.Service
	static class LimitedService {

		@RateLimit(name = "reactive-service", max = "100", window = "1m")
		public Mono<String> work() {
			return Mono.just("service");
		}

	}

	@RestController
	static class Controller {

		private final LimitedService service;

		Controller(LimitedService service) {
			this.service = service;
		}

		@GetMapping("/mono/ip")
		@RateLimit(name = "by-ip", key = "#ip", max = "1", window = "1m")
		public Mono<String> byIp() {
			return Mono.just("ok");
		}

		@GetMapping("/plain")
		@RateLimit(name = "plain", max = "5", window = "1m")
		public String plain() {
			return "plain";
		}

		@GetMapping("/unlimited")
		public Mono<String> unlimited() {
			return this.service.work();
		}

		@GetMapping("/slow/{id}")
		@RateLimit(name = "slow", key = "#id", max = "5", window = "1m")
		public Mono<String> slow(@PathVariable String id) {
			return Mono.just("ok " + id).delayElement(Duration.ofMillis(1));
		}

	}

}
