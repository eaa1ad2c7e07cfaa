package io.github.limiter.sample.embedded;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.util.Map;

import org.apache.commons.logging.LogFactory;
import org.springframework.boot.context.event.ApplicationEnvironmentPreparedEvent;
import org.springframework.context.ApplicationListener;
import org.springframework.context.aot.AbstractAotProcessor;
import org.springframework.context.event.ContextClosedEvent;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.core.env.MapPropertySource;
import redis.embedded.RedisServer;

/**
 * Starts a {@code redis-server} on 127.0.0.1 and a free port when the application configures no Redis, so that the
 * sample runs with one command and shows distributed limits; stops it when the application stops.
 *
 * <p>Configuring any of {@code spring.data.redis.host}, {@code url}, {@code port}, {@code cluster.nodes} or
 * {@code sentinel.master} uses that Redis instead; {@code sample.embedded-redis=false} switches it off.
 *
 * <p>Nothing is started while Spring Boot processes the application ahead of time ({@code spring-boot:process-aot},
 * which sets the system property {@value AbstractAotProcessor#AOT_PROCESSING}): that run only prepares the bean
 * definitions and connects to no Redis. The application started from its output starts one as usual.
 */
public class EmbeddedRedis implements ApplicationListener<ApplicationEnvironmentPreparedEvent> {

	private static final String[] CONFIGURED = { "spring.data.redis.host", "spring.data.redis.url",
			"spring.data.redis.port", "spring.data.redis.cluster.nodes", "spring.data.redis.sentinel.master" };

	@Override
	public void onApplicationEvent(ApplicationEnvironmentPreparedEvent event) {
		if (Boolean.getBoolean(AbstractAotProcessor.AOT_PROCESSING)) {
			return;
		}
		ConfigurableEnvironment environment = event.getEnvironment();
		if (!environment.getProperty("sample.embedded-redis", Boolean.class, true) || isConfigured(environment)) {
			return;
		}
		int port = freePort();
		RedisServer server;
		try {
			server = RedisServer.newRedisServer()
				.bind("127.0.0.1")
				.port(port)
				.setting("save \"\"")
				.setting("appendonly no")
				.build();
			server.start();
		}
		catch (IOException ex) {
			throw new UncheckedIOException("Could not start the embedded Redis on port " + port, ex);
		}
		environment.getPropertySources()
			.addFirst(new MapPropertySource("embeddedRedis",
					Map.of("spring.data.redis.host", "127.0.0.1", "spring.data.redis.port", port)));
		LogFactory.getLog(EmbeddedRedis.class)
			.info("Started an embedded Redis on 127.0.0.1:" + port + "; a second instance shares its limits with "
					+ "--spring.data.redis.port=" + port);
		java.util.concurrent.CountDownLatch closing = new java.util.concurrent.CountDownLatch(1);
		java.util.concurrent.CountDownLatch stopped = new java.util.concurrent.CountDownLatch(1);
		Runnable stop = () -> {
			try {
				server.stop();
			}
			catch (IOException ex) {
				// already gone
			}
			stopped.countDown();
		};
		// Stopped last, when the context is destroyed: a disposable bean registered before every other bean is destroyed
		// after them, so the limiter withdraws this instance and requests drain while Redis still answers.
		event.getSpringApplication().addInitializers(context -> {
			// Registered as disposable (a singleton registered as such gets no destruction callback), before every bean.
			((org.springframework.beans.factory.support.DefaultSingletonBeanRegistry) context.getBeanFactory())
				.registerDisposableBean("embeddedRedisServer", stop::run);
			context.addApplicationListener((ApplicationListener<ContextClosedEvent>) closed -> closing.countDown());
		});
		// On a JVM that exits without closing the context (or before there is one), the process still goes with it.
		// When Spring's own shutdown hook, which runs beside this one, closes the context, Redis stops through it, and
		// this hook waits for that.
		Runtime.getRuntime().addShutdownHook(new Thread(() -> {
			try {
				if (closing.await(1, java.util.concurrent.TimeUnit.SECONDS)
						&& stopped.await(30, java.util.concurrent.TimeUnit.SECONDS)) {
					return;
				}
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
			stop.run();
		}, "embedded-redis-stop"));
	}

	private static boolean isConfigured(ConfigurableEnvironment environment) {
		for (String property : CONFIGURED) {
			if (environment.containsProperty(property)) {
				return true;
			}
		}
		return false;
	}

	private static int freePort() {
		try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
			return socket.getLocalPort();
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

}
