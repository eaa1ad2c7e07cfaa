package io.github.limiter.spring.web;

import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;

import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Import;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

import io.github.limiter.spring.annotation.RateLimit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A client that is not a trusted proxy cannot rotate its bucket with {@code X-Forwarded-For} or {@code Forwarded}:
 * only 127.0.0.1 is trusted here, and the client connects from 127.0.0.2.
 */
@SpringBootTest(classes = ClientIpSpoofingTests.Application.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
		properties = { "limiter.backend=local", "server.forward-headers-strategy=native",
				"server.tomcat.remoteip.internal-proxies=127\\\\.0\\\\.0\\\\.1" })
class ClientIpSpoofingTests {

	@LocalServerPort
	int port;

	private int statusFrom(String localAddress, String header) throws Exception {
		try (Socket socket = new Socket()) {
			socket.bind(new InetSocketAddress(localAddress, 0));
			socket.connect(new InetSocketAddress("127.0.0.1", this.port), 2000);
			socket.setSoTimeout(5000);
			String request = "GET /by-ip HTTP/1.1\r\nHost: localhost\r\n" + header + "\r\nConnection: close\r\n\r\n";
			OutputStream out = socket.getOutputStream();
			out.write(request.getBytes(StandardCharsets.US_ASCII));
			out.flush();
			InputStream in = socket.getInputStream();
			String statusLine = new String(in.readNBytes(12), StandardCharsets.US_ASCII);
			return Integer.parseInt(statusLine.substring(9, 12));
		}
	}

	@Test
	void rotatingForwardedHeadersFromAnUntrustedPeerDoNotRotateBuckets() throws Exception {
		int admitted = 0;
		for (int i = 0; i < 10; i++) {
			String header = (i % 2 == 0) ? "X-Forwarded-For: 203.0.113." + i : "Forwarded: for=198.51.100." + i;
			if (statusFrom("127.0.0.2", header) == 200) {
				admitted++;
			}
		}
		assertThat(admitted).as("one client, one bucket of 3").isEqualTo(3);
	}

	@Test
	void aTrustedProxyForwardsTheClientAddress() throws Exception {
		for (int i = 0; i < 5; i++) {
			// Five clients behind the trusted proxy: five buckets, where one bucket would reject the fourth call.
			assertThat(statusFrom("127.0.0.1", "X-Forwarded-For: 192.0.2." + (10 + i))).isEqualTo(200);
		}
	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	@Import(Controller.class)
	static class Application {

	}

	@RestController
	static class Controller {

		@GetMapping("/by-ip")
		@RateLimit(name = "spoof", key = "#ip", max = "3", window = "1h")
		public String byIp() {
			return "ok";
		}

	}

}
