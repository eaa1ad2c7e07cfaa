package io.github.limiter.sample.redisson;

import java.net.URI;

import org.redisson.Redisson;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;
import org.redisson.config.SingleServerConfig;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Profile;
import org.springframework.core.env.Environment;
import org.springframework.util.StringUtils;

/**
 * The {@code redisson} profile: a Redisson client on the same Redis, which makes the limiter choose its Redisson
 * backend (token buckets on {@code RRateLimiter}). It reads the connection as Spring Data Redis does:
 * {@code spring.data.redis.url}, or the host, port, username, password, database and {@code ssl.enabled}; a cluster
 * or a sentinel set there fails startup with what to do instead, rather than connect somewhere else.
 */
@Configuration(proxyBeanMethods = false)
@Profile("redisson")
class RedissonProfileConfiguration {

	private static final String PREFIX = "spring.data.redis.";

	@Bean(destroyMethod = "shutdown")
	RedissonClient redissonClient(Environment environment) {
		for (String topology : new String[] { "cluster.nodes", "sentinel.master" }) {
			if (StringUtils.hasText(environment.getProperty(PREFIX + topology))) {
				throw new IllegalStateException("The sample's redisson profile connects to one Redis server, but "
						+ PREFIX + topology + " is set; define a RedissonClient bean for a cluster or a sentinel, or use "
						+ "the default profile (Spring Data Redis)");
			}
		}
		Config config = new Config();
		SingleServerConfig server = config.useSingleServer();
		String url = environment.getProperty(PREFIX + "url");
		String username = environment.getProperty(PREFIX + "username");
		String password = environment.getProperty(PREFIX + "password");
		int database = environment.getProperty(PREFIX + "database", Integer.class, 0);
		if (StringUtils.hasText(url)) {
			URI uri = URI.create(url);
			server.setAddress(uri.getScheme() + "://" + uri.getHost() + ":" + ((uri.getPort() > 0) ? uri.getPort() : 6379));
			if (uri.getUserInfo() != null) {
				String[] credentials = uri.getUserInfo().split(":", 2);
				username = StringUtils.hasText(credentials[0]) ? credentials[0] : null;
				password = (credentials.length > 1) ? credentials[1] : null;
			}
			if (uri.getPath() != null && uri.getPath().length() > 1) {
				database = Integer.parseInt(uri.getPath().substring(1));
			}
		}
		else {
			boolean ssl = environment.getProperty(PREFIX + "ssl.enabled", Boolean.class, false);
			server.setAddress((ssl ? "rediss://" : "redis://") + environment.getProperty(PREFIX + "host", "127.0.0.1")
					+ ":" + environment.getProperty(PREFIX + "port", Integer.class, 6379));
		}
		server.setUsername(StringUtils.hasText(username) ? username : null);
		server.setPassword(StringUtils.hasText(password) ? password : null);
		server.setDatabase(database);
		return Redisson.create(config);
	}

}
