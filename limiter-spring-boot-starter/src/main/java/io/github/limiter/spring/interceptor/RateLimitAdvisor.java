package io.github.limiter.spring.interceptor;

import org.springframework.aop.Pointcut;
import org.springframework.aop.support.AbstractBeanFactoryPointcutAdvisor;

/**
 * Applies the {@link RateLimitInterceptor} to the methods that have limits.
 */
public class RateLimitAdvisor extends AbstractBeanFactoryPointcutAdvisor {

	private static final long serialVersionUID = 1L;

	private final transient RateLimitPointcut pointcut;

	/**
	 * Creates an advisor.
	 * @param source where limits are found
	 */
	public RateLimitAdvisor(RateLimitOperationSource source) {
		this.pointcut = new RateLimitPointcut(source);
	}

	@Override
	public Pointcut getPointcut() {
		return this.pointcut;
	}

}
