package io.github.limiter.spring.interceptor;

import org.springframework.expression.spel.support.StandardEvaluationContext;

import io.github.limiter.spring.web.Caller;

/**
 * The context of one key expression evaluation: the method arguments by name ({@code #userId}) and position
 * ({@code #p0}, {@code #a0}), and {@code #ip}, {@code #request} and {@code #principal}, each looked up only when an
 * expression asks for it.
 */
final class RateLimitEvaluationContext extends StandardEvaluationContext {

	private final String[] parameterNames;

	private final Object[] arguments;

	private final Caller caller;

	RateLimitEvaluationContext(RateLimitExpressionRootObject root, String[] parameterNames, Object[] arguments,
			Caller caller) {
		super(root);
		this.parameterNames = parameterNames;
		this.arguments = arguments;
		this.caller = caller;
	}

	@Override
	public Object lookupVariable(String name) {
		Object value = super.lookupVariable(name);
		if (value != null) {
			return value;
		}
		if (this.parameterNames != null) {
			for (int i = 0; i < this.parameterNames.length; i++) {
				if (this.parameterNames[i].equals(name)) {
					return this.arguments[i];
				}
			}
		}
		if (name.length() > 1 && (name.charAt(0) == 'p' || name.charAt(0) == 'a') && Character.isDigit(name.charAt(1))) {
			int index = Integer.parseInt(name.substring(1));
			return (index < this.arguments.length) ? this.arguments[index] : null;
		}
		return switch (name) {
			case "ip" -> this.caller.ip();
			case "request" -> this.caller.request();
			case "principal" -> this.caller.principal();
			default -> null;
		};
	}

}
