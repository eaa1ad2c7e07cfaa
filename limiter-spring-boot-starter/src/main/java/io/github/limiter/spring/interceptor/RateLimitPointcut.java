package io.github.limiter.spring.interceptor;

import java.lang.reflect.Method;

import org.springframework.aop.ClassFilter;
import org.springframework.aop.support.StaticMethodMatcherPointcut;

import io.github.limiter.RateLimiter;
import io.github.limiter.spi.RateLimiterBackend;

/**
 * Matches methods that have limits, skipping classes that cannot have any and the limiter's own beans.
 */
class RateLimitPointcut extends StaticMethodMatcherPointcut {

	private final RateLimitOperationSource source;

	RateLimitPointcut(RateLimitOperationSource source) {
		this.source = source;
		setClassFilter(new RateLimitClassFilter());
	}

	@Override
	public boolean matches(Method method, Class<?> targetClass) {
		return this.source.getRateLimitedMethod(method, targetClass) != null;
	}

	private final class RateLimitClassFilter implements ClassFilter {

		@Override
		public boolean matches(Class<?> type) {
			if (RateLimiter.class.isAssignableFrom(type) || RateLimiterBackend.class.isAssignableFrom(type)) {
				return false;
			}
			return RateLimitPointcut.this.source.isCandidateClass(type);
		}

	}

}
