package io.github.limiter.spring.autoconfigure;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

import org.springframework.context.annotation.Conditional;

/**
 * Matches when a boolean property is missing or true, read as Spring Boot binds a {@code boolean}: {@code on},
 * {@code yes} and {@code 1} are true too. A value that is not a boolean fails startup, naming the property and the
 * value: a typo ({@code ture}) must not switch the limits off unnoticed.
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@Documented
@Conditional(SwitchCondition.class)
@interface ConditionalOnSwitch {

	/**
	 * The property.
	 * @return its full name
	 */
	String value();

}
