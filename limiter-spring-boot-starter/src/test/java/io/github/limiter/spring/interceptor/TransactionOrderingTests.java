package io.github.limiter.spring.interceptor;

import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.annotation.EnableTransactionManagement;
import org.springframework.transaction.annotation.Transactional;
import org.springframework.transaction.support.AbstractPlatformTransactionManager;
import org.springframework.transaction.support.DefaultTransactionStatus;

import io.github.limiter.RateLimitExceededException;
import io.github.limiter.spring.annotation.RateLimit;
import io.github.limiter.spring.autoconfigure.RateLimiterAutoConfiguration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * The limit is checked before {@code @Transactional} opens a transaction, so a rejected call never begins one.
 */
class TransactionOrderingTests {

	@Test
	void aRejectedCallNeverBeginsATransaction() {
		new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(RateLimiterAutoConfiguration.class))
			.withUserConfiguration(TransactionalConfiguration.class)
			.withPropertyValues("limiter.backend=local")
			.run(context -> {
				Accounts accounts = context.getBean(Accounts.class);
				CountingTransactionManager transactions = context.getBean(CountingTransactionManager.class);
				accounts.transfer();
				assertThat(transactions.begun.get()).isEqualTo(1);
				assertThatExceptionOfType(RateLimitExceededException.class).isThrownBy(accounts::transfer);
				assertThat(transactions.begun.get()).isEqualTo(1);
			});
	}

	@Test
	void withTheLimiterOrderedAfterTransactionsARejectedCallHasBegunOne() {
		new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(RateLimiterAutoConfiguration.class))
			.withUserConfiguration(TransactionalConfiguration.class)
			.withPropertyValues("limiter.backend=local", "limiter.aop.order=" + Integer.MAX_VALUE,
					"transactions.order=0")
			.run(context -> {
				Accounts accounts = context.getBean(Accounts.class);
				CountingTransactionManager transactions = context.getBean(CountingTransactionManager.class);
				accounts.transfer();
				assertThatExceptionOfType(RateLimitExceededException.class).isThrownBy(accounts::transfer);
				assertThat(transactions.begun.get()).as("the order is what decides").isEqualTo(2);
			});
	}

	@Configuration(proxyBeanMethods = false)
	@EnableTransactionManagement
	static class TransactionalConfiguration {

		@Bean
		static org.springframework.beans.factory.config.BeanFactoryPostProcessor transactionAdvisorOrder(
				org.springframework.core.env.Environment environment) {
			return beanFactory -> {
				String order = environment.getProperty("transactions.order");
				if (order != null) {
					beanFactory.getBeanDefinition(
							org.springframework.transaction.config.TransactionManagementConfigUtils.TRANSACTION_ADVISOR_BEAN_NAME)
						.getPropertyValues()
						.add("order", Integer.valueOf(order));
				}
			};
		}

		@Bean
		CountingTransactionManager transactionManager() {
			return new CountingTransactionManager();
		}

		@Bean
		Accounts accounts() {
			return new Accounts();
		}

	}

	static class Accounts {

		@Transactional
		@RateLimit(max = "1", window = "1h")
		public void transfer() {
		}

	}

	static class CountingTransactionManager extends AbstractPlatformTransactionManager {

		private static final long serialVersionUID = 1L;

		final AtomicInteger begun = new AtomicInteger();

		@Override
		protected Object doGetTransaction() {
			return new Object();
		}

		@Override
		protected void doBegin(Object transaction, TransactionDefinition definition) {
			this.begun.incrementAndGet();
		}

		@Override
		protected void doCommit(DefaultTransactionStatus status) {
		}

		@Override
		protected void doRollback(DefaultTransactionStatus status) {
		}

	}

}
