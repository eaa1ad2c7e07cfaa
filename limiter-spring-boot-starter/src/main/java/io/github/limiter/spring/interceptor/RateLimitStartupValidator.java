package io.github.limiter.spring.interceptor;

import java.lang.reflect.Method;

import org.springframework.aop.support.AopUtils;
import org.springframework.beans.factory.FactoryBean;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.util.ClassUtils;
import org.springframework.util.ReflectionUtils;

/**
 * Reads the {@code @RateLimit} annotations of beans that were not created at startup (lazy beans, or every bean with
 * {@code spring.main.lazy-initialization=true}), and of beans behind an interface proxy
 * ({@code spring.aop.proxy-target-class=false}), whose making stopped at the first limited method, so that a bad
 * annotation fails startup there too instead of every call, and of what factory beans make, which may not have been
 * made yet. The other beans were read when their proxy was made.
 */
public class RateLimitStartupValidator implements SmartInitializingSingleton {

	private final ConfigurableListableBeanFactory beanFactory;

	private final RateLimitOperationSource source;

	/**
	 * Creates a validator.
	 * @param beanFactory the bean factory whose definitions are read
	 * @param source the source that parses and validates limits
	 */
	public RateLimitStartupValidator(ConfigurableListableBeanFactory beanFactory, RateLimitOperationSource source) {
		this.beanFactory = beanFactory;
		this.source = source;
	}

	@Override
	public void afterSingletonsInstantiated() {
		for (String name : this.beanFactory.getBeanDefinitionNames()) {
			BeanDefinition definition = this.beanFactory.getBeanDefinition(name);
			if (definition.isAbstract() || definition.getRole() == BeanDefinition.ROLE_INFRASTRUCTURE) {
				continue;
			}
			Class<?> type;
			if (this.beanFactory.containsSingleton(name)) {
				// A class proxy was made by asking about every method; an interface proxy, only until one matched.
				Object bean = this.beanFactory.getSingleton(name);
				if (bean instanceof FactoryBean<?>) {
					// What it makes, which no one may have asked for yet.
					type = this.beanFactory.getType(name, false);
				}
				else if (bean == null || !AopUtils.isJdkDynamicProxy(bean)) {
					continue;
				}
				else {
					type = AopUtils.getTargetClass(bean);
				}
			}
			else {
				type = this.beanFactory.getType(name, false);
			}
			if (type == null) {
				continue;
			}
			Class<?> userClass = ClassUtils.getUserClass(type);
			if (!this.source.isCandidateClass(userClass)) {
				continue;
			}
			for (Method method : ReflectionUtils.getUniqueDeclaredMethods(userClass, ReflectionUtils.USER_DECLARED_METHODS)) {
				this.source.getRateLimitedMethod(method, userClass);
			}
		}
	}

}
