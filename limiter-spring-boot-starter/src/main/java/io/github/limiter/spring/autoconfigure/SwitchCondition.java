package io.github.limiter.spring.autoconfigure;

import org.springframework.boot.autoconfigure.condition.ConditionOutcome;
import org.springframework.boot.autoconfigure.condition.SpringBootCondition;
import org.springframework.boot.context.properties.bind.BindException;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.core.type.AnnotatedTypeMetadata;

/** {@link ConditionalOnSwitch}'s condition. */
class SwitchCondition extends SpringBootCondition {

	@Override
	public ConditionOutcome getMatchOutcome(ConditionContext context, AnnotatedTypeMetadata metadata) {
		String property = (String) metadata.getAnnotationAttributes(ConditionalOnSwitch.class.getName()).get("value");
		boolean on;
		try {
			on = Binder.get(context.getEnvironment()).bind(property, Boolean.class).orElse(true);
		}
		catch (BindException ex) {
			throw new IllegalStateException("Invalid " + property + " = '" + context.getEnvironment().getProperty(property)
					+ "': expected true or false", ex);
		}
		return on ? ConditionOutcome.match(property + " is true") : ConditionOutcome.noMatch(property + " is false");
	}

}
