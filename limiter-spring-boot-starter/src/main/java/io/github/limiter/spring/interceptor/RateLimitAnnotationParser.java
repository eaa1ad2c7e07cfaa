package io.github.limiter.spring.interceptor;

import java.lang.annotation.Annotation;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.time.Duration;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.StringJoiner;

import org.springframework.core.DefaultParameterNameDiscoverer;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.core.ParameterNameDiscoverer;
import org.springframework.expression.Expression;
import org.springframework.expression.ParseException;
import org.springframework.expression.spel.SpelNode;
import org.springframework.expression.spel.ast.VariableReference;
import org.springframework.expression.spel.standard.SpelExpression;
import org.springframework.expression.spel.standard.SpelExpressionParser;
import org.springframework.util.ReflectionUtils;
import org.springframework.util.StringUtils;
import org.springframework.util.StringValueResolver;

import io.github.limiter.Limit;
import io.github.limiter.RateLimiter;
import io.github.limiter.algorithm.Algorithm;
import io.github.limiter.algorithm.CalendarUnit;
import io.github.limiter.algorithm.FixedWindow;
import io.github.limiter.algorithm.LeakyBucket;
import io.github.limiter.algorithm.SlidingWindowCounter;
import io.github.limiter.algorithm.SlidingWindowLog;
import io.github.limiter.algorithm.TokenBucket;
import io.github.limiter.guard.FailurePolicy;
import io.github.limiter.spring.annotation.RateLimit;
import io.github.limiter.spring.annotation.RateLimits;
import io.github.limiter.spring.autoconfigure.RateLimiterProperties;
import io.github.limiter.spring.autoconfigure.RateLimiterProperties.Policy;
import io.github.limiter.spring.interceptor.RateLimitSettings.Level;
import io.github.limiter.spring.interceptor.RateLimitSettings.Setting;

/**
 * Turns {@code @RateLimit} annotations into {@link RateLimitOperation}s, once per method, and validates them: every
 * problem fails startup with a message that names the class, the method, the attribute (or property) and the value.
 *
 * <p>Each setting comes from the first of: a runtime override of the limit, the annotation attribute (placeholders
 * resolved), the named policy, the defaults, the built-in default ({@link RateLimitSettings}, which binds the attributes with Boot's binder). The
 * checks that span settings are all here, in {@code operation}.
 */
final class RateLimitAnnotationParser {

	/** Variables a key expression may use besides the method's parameters. */
	static final Set<String> CONTEXT_VARIABLES = Set.of("ip", "request", "principal", "root", "this");

	private final RateLimiterProperties properties;

	private final StringValueResolver placeholders;

	private final Map<String, Map<String, String>> overrides;

	private final SpelExpressionParser expressionParser = new SpelExpressionParser();

	/** Whether the application defines a bean of that name. */
	private final java.util.function.Predicate<String> beans;

	private final ParameterNameDiscoverer parameterNames = new DefaultParameterNameDiscoverer();

	RateLimitAnnotationParser(RateLimiterProperties properties, StringValueResolver placeholders,
			Map<String, Map<String, String>> overrides, java.util.function.Predicate<String> beans) {
		this.properties = properties;
		this.placeholders = placeholders;
		this.overrides = overrides;
		this.beans = beans;
	}

	/**
	 * Parses the annotations of a method.
	 * @param method the method
	 * @param targetClass the target class
	 * @param annotations the method's own annotations
	 * @param typeAnnotations the annotations of its class, which apply to it too
	 * @return the limited method
	 */
	RateLimitedMethod parse(Method method, Class<?> targetClass, List<RateLimit> annotations,
			List<RateLimit> typeAnnotations) {
		String where = method.getDeclaringClass().getName() + "." + method.getName()
				+ parameterList(method, false);
		List<RateLimitOperation> operations = new ArrayList<>(annotations.size());
		String fallbackName = null;
		String[] names = this.parameterNames.getParameterNames(method);
		Set<String> unnamed = new HashSet<>();
		List<RateLimit> all = new ArrayList<>(typeAnnotations);
		all.addAll(annotations);
		for (int i = 0; i < all.size(); i++) {
			RateLimit annotation = all.get(i);
			Resolver resolver = new Resolver(annotation, where);
			// A class-level limit gets a name of its own, so it never merges with the method's own limit.
			String defaultName = describe(method, targetClass) + ((i < typeAnnotations.size()) ? "[class]" : "");
			RateLimitOperation operation = operation(annotation, resolver, method, targetClass, names, defaultName);
			if (operation.limit().name().equals(defaultName)) {
				unnamed.add(defaultName);
			}
			operations.add(operation);
			String fallback = resolver.text("fallback", annotation.fallback());
			if (StringUtils.hasText(fallback)) {
				if (fallbackName != null && !fallbackName.equals(fallback)) {
					throw resolver.invalid("attribute 'fallback'", fallback,
							"differs from the fallback '" + fallbackName + "' of another @RateLimit of the same method");
				}
				fallbackName = fallback;
			}
		}
		Set<String> seen = new HashSet<>();
		for (RateLimitOperation operation : operations) {
			if (!seen.add(operation.limit().name())) {
				throw new IllegalStateException("Invalid @RateLimit on " + where + ": limit '" + operation.limit().name()
						+ "' is declared twice on the method; give each @RateLimit its own name");
			}
		}
		FallbackMethod fallback = null;
		if (fallbackName != null) {
			try {
				fallback = FallbackMethod.find(method, targetClass, fallbackName);
			}
			catch (IllegalArgumentException ex) {
				throw new IllegalStateException(
						"Invalid @RateLimit on " + where + ": attribute 'fallback' = '" + fallbackName + "': " + ex.getMessage());
			}
		}
		return new RateLimitedMethod(method, targetClass, operations, unnamed, fallback, names);
	}

	private RateLimitOperation operation(RateLimit annotation, Resolver resolver, Method method, Class<?> targetClass,
			String[] names, String defaultName) {
		String name = resolver.text("name", annotation.name());
		if (!StringUtils.hasText(name)) {
			name = defaultName;
		}
		RateLimitSettings settings = resolver.settings(this.overrides.getOrDefault(name, Map.of()));
		Algorithm algorithm = settings.get("algorithm", Algorithm.TOKEN_BUCKET).value();
		Setting<Long> max = settings.get("max", null);
		Setting<Duration> window = settings.get("window", null);
		Setting<Long> cost = settings.get("cost", 1L);
		Setting<Long> capacity = settings.get("capacity", null);
		Setting<Duration> warmup = settings.get("warmup", Duration.ZERO);
		Setting<Long> burst = settings.get("burst", 0L);
		Setting<Boolean> nodelay = settings.get("nodelay", false);
		Setting<Long> delay = settings.get("delay", null);
		Setting<CalendarUnit> calendar = settings.get("calendar", null);
		Setting<ZoneId> zone = settings.get("zone", ZoneId.systemDefault());
		Setting<Limit.Scope> scope = settings.get("scope", Limit.Scope.SHARED);

		if (algorithm != Algorithm.FIXED_WINDOW || (!calendar.explicit() && window.explicit())) {
			// A calendar from the defaults applies only to fixed windows that set no window of their own.
			if (!calendar.explicit()) {
				calendar = new Setting<>(null, "", calendar.origin(), Level.BUILT_IN);
			}
		}
		resolver.acceptedBy(algorithm, capacity, Algorithm.TOKEN_BUCKET);
		resolver.acceptedBy(algorithm, warmup, Algorithm.TOKEN_BUCKET);
		resolver.acceptedBy(algorithm, burst, Algorithm.LEAKY_BUCKET);
		resolver.acceptedBy(algorithm, nodelay, Algorithm.LEAKY_BUCKET);
		resolver.acceptedBy(algorithm, delay, Algorithm.LEAKY_BUCKET);
		resolver.acceptedBy(algorithm, calendar, Algorithm.FIXED_WINDOW);
		if (calendar.value() == null) {
			resolver.acceptedBy(algorithm, zone, null);
		}
		resolver.required(max).positive(max);
		if (calendar.value() != null) {
			if (window.explicit()) {
				throw resolver.invalid(window.origin(), window.text(), "cannot be combined with " + calendar.origin() + " = '"
						+ calendar.text() + "': a calendar window has the length of its period");
			}
		}
		else {
			resolver.required(window);
			if (window.value().isNegative() || window.value().isZero()) {
				throw resolver.invalid(window.origin(), window.text(), "must be a positive duration");
			}
		}
		resolver.positive(cost);
		if (capacity.value() != null) {
			resolver.positive(capacity);
		}
		if (warmup.value().isNegative()) {
			throw resolver.invalid(warmup.origin(), warmup.text(), "must be a positive duration, or 0 for none");
		}
		if (burst.value() < 0) {
			throw resolver.invalid(burst.origin(), burst.text(), "must not be negative");
		}
		if (delay.value() != null) {
			if (nodelay.value() && nodelay.explicit()) {
				throw resolver.invalid(delay.origin(), delay.text(), "cannot be combined with " + nodelay.origin()
						+ " = 'true', which serves the whole burst at once (a delay equal to the burst)");
			}
			if (delay.value() < 0 || delay.value() > burst.value()) {
				throw resolver.invalid(delay.origin(), delay.text(),
						"must be between 0 and the burst (" + burst.value() + ")");
			}
		}

		Limit limit;
		try {
			limit = switch (algorithm) {
				case FIXED_WINDOW -> {
					FixedWindow.Builder builder = FixedWindow.builder(name).limit(max.value()).scope(scope.value());
					yield (calendar.value() != null) ? builder.calendar(calendar.value(), zone.value()).build()
							: builder.window(window.value()).build();
				}
				case SLIDING_WINDOW_LOG -> SlidingWindowLog.of(name, max.value(), window.value()).withScope(scope.value());
				case SLIDING_WINDOW_COUNTER -> SlidingWindowCounter.of(name, max.value(), window.value()).withScope(scope.value());
				case TOKEN_BUCKET -> TokenBucket
					.builder(name)
					.capacity((capacity.value() != null) ? capacity.value() : max.value())
					.refill(max.value(), window.value())
					.warmup(warmup.value())
					.scope(scope.value())
					.build();
				case LEAKY_BUCKET -> LeakyBucket
					.twoStage(name, max.value(), window.value(), burst.value(),
							(delay.value() != null) ? delay.value() : nodelay.value() ? burst.value() : 0)
					.withScope(scope.value());
			};
		}
		catch (IllegalArgumentException ex) {
			throw new IllegalStateException("Invalid @RateLimit on " + resolver.where + " (" + algorithm + ", max=" + max.text()
					+ ", window=" + window.text() + "): " + ex.getMessage(), ex);
		}
		if (cost.value() > limit.capacity()) {
			throw resolver.invalid(cost.origin(), cost.text(),
					"exceeds the capacity " + limit.capacity() + " of the limit, so no call could ever pass");
		}
		String keyText = resolver.expression("key", annotation.key());
		Expression key = StringUtils.hasText(keyText) ? parseKey(resolver, "key", keyText, method, names, Set.of())
				: null;

		Setting<FailurePolicy> onFailure = settings.get("onFailure", this.properties.getFailure().getPolicy());
		Setting<Duration> maxWait = settings.get("maxWait", Duration.ZERO);
		if (maxWait.value().isNegative()) {
			throw resolver.invalid(maxWait.origin(), maxWait.text(), "must not be negative");
		}
		if (maxWait.value().compareTo(RateLimiter.MAX_WAIT) > 0) {
			throw resolver.invalid(maxWait.origin(), maxWait.text(),
					"must be at most " + RateLimiter.MAX_WAIT.toDays() + " days");
		}
		Setting<Boolean> shadow = settings.get("shadow", this.properties.isShadow());
		String recordIfText = resolver.expression("recordIf", annotation.recordIf());
		Expression recordIf = StringUtils.hasText(recordIfText)
				? parseKey(resolver, "recordIf", recordIfText, method, names, Set.of("result")) : null;
		if (recordIf != null && isStream(method.getReturnType())) {
			throw resolver.invalid("attribute 'recordIf'", recordIfText,
					"applies to single results only, and " + method.getReturnType().getSimpleName()
							+ " is a stream: use recordOn to count streams that end with an error");
		}
		String conditionText = resolver.expression("condition", annotation.condition());
		Expression condition = StringUtils.hasText(conditionText)
				? parseKey(resolver, "condition", conditionText, method, names, Set.of()) : null;
		List<Class<? extends Throwable>> recordOn = List.of(annotation.recordOn());
		boolean failuresOnly = recordIf != null || !recordOn.isEmpty();
		if (failuresOnly && shadow.value() && !shadow.explicit()) {
			// limiter.shadow switches on shadow mode for the limits that count every call; one that counts failures
			// guards against guessing, and its permits are only held while a call runs.
			shadow = new Setting<>(false, "false", shadow.origin(), Level.BUILT_IN);
		}
		if (failuresOnly && shadow.value()) {
			throw resolver.invalid(shadow.origin(), shadow.text(),
					"cannot be combined with recordOn/recordIf: a limit that counts only failures is there to refuse the "
							+ "next attempt, which shadow mode never does");
		}
		if (failuresOnly && !maxWait.value().isZero()) {
			throw resolver.invalid(maxWait.origin(), maxWait.text(),
					"cannot be combined with recordOn/recordIf: waiting does not make a failure count expire sooner");
		}
		return new RateLimitOperation(limit, cost.value(), (keyText != null) ? keyText : "", key, argument(key, names),
				resolver.policyName, onFailure.value(), maxWait.value(), shadow.value(), recordOn, recordIf, condition,
				sourcesInForce(settings, algorithm, calendar.value() != null));
	}

	/**
	 * Where each setting in force comes from, for the endpoint: a default that this limit's algorithm ignores (a
	 * capacity from {@code limiter.defaults} on a fixed window, a calendar on a bucket) is not in force.
	 */
	private static Map<String, String> sourcesInForce(RateLimitSettings settings, Algorithm algorithm,
			boolean calendar) {
		Map<String, String> sources = settings.sources();
		if (algorithm != Algorithm.TOKEN_BUCKET) {
			sources.keySet().removeAll(List.of("capacity", "warmup"));
		}
		if (algorithm != Algorithm.LEAKY_BUCKET) {
			sources.keySet().removeAll(List.of("burst", "nodelay", "delay"));
		}
		sources.keySet().removeAll(calendar ? List.of("window") : List.of("calendar", "zone"));
		return sources;
	}

	/**
	 * The position of the argument a key expression consists of, resolved the way
	 * {@link RateLimitEvaluationContext#lookupVariable} resolves it (parameter names first, then {@code #p0}/{@code #a0}),
	 * or -1 for any other expression.
	 */
	static int argument(Expression key, String[] names) {
		if (!(key instanceof SpelExpression spel) || !(spel.getAST() instanceof VariableReference reference)) {
			return -1;
		}
		String name = reference.toStringAST().substring(1);
		if (name.equals("root") || name.equals("this")) {
			// SpEL answers these itself, whatever the parameters are called.
			return -1;
		}
		if (names != null) {
			for (int i = 0; i < names.length; i++) {
				if (names[i].equals(name)) {
					return i;
				}
			}
		}
		if (name.length() > 1 && (name.charAt(0) == 'p' || name.charAt(0) == 'a')
				&& name.substring(1).chars().allMatch(Character::isDigit) && name.length() < 10) {
			return Integer.parseInt(name.substring(1));
		}
		return -1;
	}

	/**
	 * Whether an expression reads the caller: {@code #ip}, {@code #request} or {@code #principal}.
	 * @param expression a parsed expression, or {@code null}
	 * @return whether evaluating it needs the caller
	 */
	static boolean usesCaller(Expression expression) {
		return expression instanceof SpelExpression spel && usesCaller(spel.getAST());
	}

	private static boolean usesCaller(SpelNode node) {
		if (node instanceof VariableReference) {
			String variable = node.toStringAST().substring(1);
			if (variable.equals("ip") || variable.equals("request") || variable.equals("principal")) {
				return true;
			}
		}
		for (int i = 0; i < node.getChildCount(); i++) {
			if (usesCaller(node.getChild(i))) {
				return true;
			}
		}
		return false;
	}

	/** A reactive stream other than a Mono, checked by name: Reactor may not be on the classpath. */
	private static boolean isStream(Class<?> type) {
		for (Class<?> current = type; current != null; current = current.getSuperclass()) {
			if (current.getName().equals("reactor.core.publisher.Mono")) {
				return false;
			}
		}
		return implementsByName(type, "org.reactivestreams.Publisher");
	}

	private static boolean implementsByName(Class<?> type, String name) {
		if (type == null) {
			return false;
		}
		if (type.getName().equals(name)) {
			return true;
		}
		for (Class<?> implemented : type.getInterfaces()) {
			if (implementsByName(implemented, name)) {
				return true;
			}
		}
		return implementsByName(type.getSuperclass(), name);
	}

	private Expression parseKey(Resolver resolver, String attribute, String text, Method method, String[] names,
			Set<String> extra) {
		Expression expression;
		try {
			expression = this.expressionParser.parseExpression(text);
		}
		catch (ParseException ex) {
			throw resolver.invalid("attribute '" + attribute + "'", text, "is not a valid SpEL expression: " + ex.getMessage());
		}
		if (expression instanceof SpelExpression spel) {
			checkVariables(resolver, attribute, text, spel.getAST(), method, names, extra);
		}
		return expression;
	}

	private void checkVariables(Resolver resolver, String attribute, String text, SpelNode node, Method method,
			String[] names, Set<String> extra) {
		if (node instanceof org.springframework.expression.spel.ast.Assign) {
			// Evaluated on every call, an assignment would change the arguments or the context: a typo for ==.
			throw resolver.invalid("attribute '" + attribute + "'", text, "assigns a value ("
					+ node.toStringAST() + "); to compare, write ==");
		}
		if (node instanceof org.springframework.expression.spel.ast.BeanReference) {
			String name = node.toStringAST();
			name = name.startsWith("@") ? name.substring(1) : name;
			if (name.length() > 1 && name.startsWith("'") && name.endsWith("'")) {
				name = name.substring(1, name.length() - 1);
			}
			if (!this.beans.test(name)) {
				throw resolver.invalid("attribute '" + attribute + "'", text, "refers to the bean '" + name
						+ "', which the application does not define");
			}
		}
		if (node instanceof VariableReference) {
			String variable = node.toStringAST().substring(1);
			if (!extra.contains(variable) && !isKnownVariable(variable, method, names)) {
				String parameters = (names != null) ? String.join(", ", names)
						: "unknown: compile with -parameters, or use #p0, #p1...";
				StringBuilder known = new StringBuilder("#ip, #request, #principal");
				extra.forEach(name -> known.append(", #").append(name));
				throw resolver.invalid("attribute '" + attribute + "'", text, "refers to #" + variable
						+ ", which is neither a parameter of the method (" + parameters + ") nor one of " + known);
			}
		}
		for (int i = 0; i < node.getChildCount(); i++) {
			checkVariables(resolver, attribute, text, node.getChild(i), method, names, extra);
		}
	}

	private static boolean isKnownVariable(String variable, Method method, String[] names) {
		if (CONTEXT_VARIABLES.contains(variable)) {
			return true;
		}
		if (names != null && Arrays.asList(names).contains(variable)) {
			return true;
		}
		if (variable.length() > 1 && (variable.charAt(0) == 'p' || variable.charAt(0) == 'a')) {
			try {
				int index = Integer.parseInt(variable.substring(1));
				return index >= 0 && index < method.getParameterCount();
			}
			catch (NumberFormatException ex) {
				return false;
			}
		}
		return false;
	}

	/**
	 * Fails when an annotated method of the class can never be intercepted by a proxy: annotated itself, through a
	 * composed annotation, or through the interface or superclass method it implements.
	 * @param type a bean class
	 */
	static void checkInterceptable(Class<?> type) {
		boolean classLimited = !AnnotatedElementUtils.findMergedRepeatableAnnotations(type, RateLimit.class,
				RateLimits.class).isEmpty();
		// A generated class (a JDK proxy, a lambda) implements its interfaces' methods with final ones of its own, which
		// Spring does not subclass but wraps in an interface proxy: only its interfaces' methods are read.
		boolean generated = generated(type);
		for (Class<?> current = generated ? null : type; current != null && current != Object.class;
				current = current.getSuperclass()) {
			for (Method method : current.getDeclaredMethods()) {
				int modifiers = method.getModifiers();
				if (classLimited && coveredByClassLimit(method) && Modifier.isFinal(modifiers) && !method.isSynthetic()) {
					throw new IllegalStateException("Invalid @RateLimit on class " + type.getName()
							+ ": it applies to every public method, and " + current.getName() + "." + method.getName()
							+ parameterList(method, false) + " is final, so no proxy can intercept its calls and the limit"
							+ " would never apply to it; make the method not final, or annotate the methods one by one");
				}
				// Found as the pointcut finds them: on the method, through composed annotations, or on the method it
				// implements or overrides.
				if (method.isSynthetic() || AnnotatedElementUtils.findMergedRepeatableAnnotations(method, RateLimit.class,
						RateLimits.class).isEmpty()) {
					continue;
				}
				String problem = Modifier.isPrivate(modifiers) ? "private" : Modifier.isStatic(modifiers) ? "static"
						: Modifier.isFinal(modifiers) ? "final" : null;
				if (problem != null) {
					throw new IllegalStateException("Invalid @RateLimit on " + current.getName() + "." + method.getName()
							+ parameterList(method, false) + ": the method is " + problem
							+ ", so no proxy can intercept its calls and the limit would never apply");
				}
			}
		}
		// The interfaces' limited methods: a private or static one no proxy sees; an abstract or default one that the
		// class implements by a final method inherited from a superclass outside the interface, which the loop above
		// finds no annotation on, no proxy of the class can intercept.
		for (Class<?> contract : interfaces(type)) {
			for (Method declared : contract.getDeclaredMethods()) {
				if (declared.isSynthetic() || AnnotatedElementUtils.findMergedRepeatableAnnotations(declared,
						RateLimit.class, RateLimits.class).isEmpty()) {
					continue;
				}
				int modifiers = declared.getModifiers();
				if (Modifier.isPrivate(modifiers) || Modifier.isStatic(modifiers)) {
					throw new IllegalStateException("Invalid @RateLimit on " + contract.getName() + "."
							+ declared.getName() + parameterList(declared, false) + ": the method is "
							+ (Modifier.isPrivate(modifiers) ? "private" : "static")
							+ ", so no proxy can intercept its calls and the limit would never apply");
				}
				Method implementation = org.springframework.util.ClassUtils.getMostSpecificMethod(declared, type);
				if (!generated && implementation != declared && Modifier.isFinal(implementation.getModifiers())
						&& !implementation.isSynthetic()) {
					throw new IllegalStateException("Invalid @RateLimit on " + contract.getName() + "."
							+ declared.getName() + parameterList(declared, false) + ": class " + type.getName()
							+ " implements it with the final method " + implementation.getDeclaringClass().getName()
							+ "." + implementation.getName() + parameterList(implementation, false)
							+ ", so no proxy of the class can intercept its calls and the limit would never apply");
				}
			}
		}
		// A class's limit that covers none of its methods (handlers written package-private, as controllers often
		// are) would limit nothing, silently.
		if (classLimited && java.util.Arrays.stream(type.getMethods())
			.noneMatch(method -> method.getDeclaringClass() != Object.class && !method.isSynthetic()
					&& coveredByClassLimit(method))) {
			throw new IllegalStateException("Invalid @RateLimit on class " + type.getName() + ": it applies to every"
					+ " public instance method, and the class has none (its package-private and protected methods are"
					+ " not covered), so the limit would never apply; make the methods to limit public, or annotate"
					+ " them one by one");
		}
	}

	/** Every interface the class implements, directly, through its superclasses or through other interfaces. */
	private static Set<Class<?>> interfaces(Class<?> type) {
		Set<Class<?>> all = new java.util.LinkedHashSet<>();
		java.util.Deque<Class<?>> pending = new java.util.ArrayDeque<>(
				org.springframework.util.ClassUtils.getAllInterfacesForClassAsSet(type));
		while (!pending.isEmpty()) {
			Class<?> contract = pending.poll();
			if (all.add(contract)) {
				pending.addAll(Arrays.asList(contract.getInterfaces()));
			}
		}
		return all;
	}

	/**
	 * Whether a limit on the class applies to a method: every public instance method, except the class's own
	 * {@code toString}, {@code equals} and {@code hashCode}, which logging and collections call without the
	 * application asking for anything.
	 * @param method a method of a limited class
	 * @return whether the class's limit applies to it
	 */
	/**
	 * The class a method's default limit name reads: the bean's class (not a proxy's), but the interface that declares
	 * the method when the bean's class is generated, whose name changes from one JVM to the next, or does not implement
	 * that interface, being one implementation behind many proxies (Spring Data's repositories).
	 * @param method the method, as {@link #parsedMethod} gives it
	 * @param targetClass the bean's class
	 * @return the class
	 */
	static Class<?> namingClass(Method method, Class<?> targetClass) {
		Class<?> owner = (targetClass != null) ? org.springframework.util.ClassUtils.getUserClass(targetClass)
				: method.getDeclaringClass();
		return (generated(owner) || !method.getDeclaringClass().isAssignableFrom(owner)) ? method.getDeclaringClass()
				: owner;
	}

	/**
	 * Whether a bean's class is made at run time by the JDK, as a JDK proxy or a lambda's: Spring limits its
	 * interfaces' methods through an interface proxy, and its name is not the same in every JVM.
	 * @param type a bean class
	 * @return whether it is generated
	 */
	static boolean generated(Class<?> type) {
		return java.lang.reflect.Proxy.isProxyClass(type) || type.isHidden();
	}

	/**
	 * The method a limit is read from: the one the bean's class declares, or, for a generated class or one that does
	 * not implement the called method's interface, the interface's method, whose parameter names the keys read.
	 * @param called the method called (an interface's, behind an interface proxy)
	 * @param specific the class's own method of that signature
	 * @param userClass the bean's class
	 * @return the method to parse
	 */
	static Method parsedMethod(Method called, Method specific, Class<?> userClass) {
		if (!called.getDeclaringClass().isAssignableFrom(userClass)) {
			return called;
		}
		if (!generated(userClass)) {
			return specific;
		}
		for (Class<?> contract : org.springframework.util.ClassUtils.getAllInterfacesForClassAsSet(userClass)) {
			try {
				return contract.getMethod(called.getName(), called.getParameterTypes());
			}
			catch (NoSuchMethodException ex) {
				// declared by another of its interfaces
			}
		}
		return specific;
	}

	static boolean coveredByClassLimit(Method method) {
		return Modifier.isPublic(method.getModifiers()) && !Modifier.isStatic(method.getModifiers())
				&& !ReflectionUtils.isToStringMethod(method) && !ReflectionUtils.isEqualsMethod(method)
				&& !ReflectionUtils.isHashCodeMethod(method) && !webHelper(method);
	}

	/**
	 * Whether a method is one that Spring's web layer calls around a controller's handlers, through the controller's
	 * proxy: an {@code @ExceptionHandler}, an {@code @InitBinder}, or an {@code @ModelAttribute} that is no handler. A
	 * class's limit counts requests, so it leaves them out: counted, one request would take a permit for each of them,
	 * and an exception handler that answers an error would answer a rejection instead.
	 */
	private static boolean webHelper(Method method) {
		if (REQUEST_MAPPING == null) {
			return false;
		}
		return AnnotatedElementUtils.hasAnnotation(method, EXCEPTION_HANDLER)
				|| AnnotatedElementUtils.hasAnnotation(method, INIT_BINDER)
				|| (AnnotatedElementUtils.hasAnnotation(method, MODEL_ATTRIBUTE)
						&& !AnnotatedElementUtils.hasAnnotation(method, REQUEST_MAPPING));
	}

	private static final Class<? extends Annotation> REQUEST_MAPPING = webAnnotation("RequestMapping");

	private static final Class<? extends Annotation> EXCEPTION_HANDLER = webAnnotation("ExceptionHandler");

	private static final Class<? extends Annotation> INIT_BINDER = webAnnotation("InitBinder");

	private static final Class<? extends Annotation> MODEL_ATTRIBUTE = webAnnotation("ModelAttribute");

	/** An annotation of {@code org.springframework.web.bind.annotation}, or {@code null} without Spring Web. */
	@SuppressWarnings("unchecked")
	private static Class<? extends Annotation> webAnnotation(String name) {
		String className = "org.springframework.web.bind.annotation." + name;
		ClassLoader loader = RateLimitAnnotationParser.class.getClassLoader();
		return org.springframework.util.ClassUtils.isPresent(className, loader)
				? (Class<? extends Annotation>) org.springframework.util.ClassUtils.resolveClassName(className, loader)
				: null;
	}

	/**
	 * The default name of a method's limit: {@code SimpleClassName.method}, with the parameter types when the
	 * method is overloaded.
	 * @param method the method
	 * @param targetClass the target class
	 * @return the name
	 */
	static String describe(Method method, Class<?> targetClass) {
		Class<?> owner = namingClass(method, targetClass);
		return owner.getSimpleName() + "." + method.getName()
				+ ((overloads(owner, method.getName()) > 1) ? parameterList(method, true) : "");
	}

	/**
	 * The methods of a name: public ones, inherited or not, and the class's and its superclasses' protected and
	 * package-private instance methods, which a proxy can limit too; a private one, which no limit can be on, does not
	 * make the limited method's name longer.
	 */
	private static int overloads(Class<?> owner, String name) {
		// Public methods counted one by one, bridges included, as names were always given: a name must not change.
		int count = 0;
		Set<List<Class<?>>> signatures = new HashSet<>();
		for (Method candidate : owner.getMethods()) {
			if (candidate.getName().equals(name)) {
				count++;
				signatures.add(List.of(candidate.getParameterTypes()));
			}
		}
		for (Class<?> current = owner; current != null && current != Object.class; current = current.getSuperclass()) {
			for (Method candidate : current.getDeclaredMethods()) {
				int modifiers = candidate.getModifiers();
				if (candidate.getName().equals(name) && !candidate.isBridge() && !candidate.isSynthetic()
						&& !Modifier.isPrivate(modifiers) && !Modifier.isStatic(modifiers)
						&& signatures.add(List.of(candidate.getParameterTypes()))) {
					count++;
				}
			}
		}
		return count;
	}

	static String parameterList(Method method, boolean simple) {
		StringJoiner joiner = new StringJoiner(",", "(", ")");
		for (Class<?> type : method.getParameterTypes()) {
			joiner.add(simple ? type.getSimpleName() : type.getName());
		}
		return joiner.toString();
	}

	/**
	 * The startup failure of an invalid setting.
	 * @param where the annotated method
	 * @param origin the attribute or property
	 * @param value its value
	 * @param problem what is wrong with it
	 * @return the exception to throw
	 */
	static IllegalStateException invalid(String where, String origin, String value, String problem) {
		return new IllegalStateException("Invalid @RateLimit on " + where + ": " + origin + " = '" + value + "' " + problem);
	}

	/** Resolves the settings of one annotation. */
	private final class Resolver {

		private final RateLimit annotation;

		private final String where;

		private final String policyName;

		private final Policy policy;

		Resolver(RateLimit annotation, String where) {
			this.annotation = annotation;
			this.where = where;
			String name = text("policy", annotation.policy());
			this.policyName = (name != null) ? name : "";
			if (StringUtils.hasText(name)) {
				this.policy = RateLimitAnnotationParser.this.properties.getPolicies().get(name);
				if (this.policy == null) {
					throw invalid("attribute 'policy'", name, "names no policy under limiter.policies (defined: "
							+ RateLimitAnnotationParser.this.properties.getPolicies().keySet() + ")");
				}
			}
			else {
				this.policy = null;
			}
		}

		String text(String attribute, String raw) {
			if (!StringUtils.hasText(raw)) {
				return null;
			}
			try {
				// A placeholder that resolves to nothing leaves the attribute unset: the policy or the defaults apply.
				String resolved = RateLimitAnnotationParser.this.placeholders.resolveStringValue(raw);
				return StringUtils.hasText(resolved) ? resolved : null;
			}
			catch (IllegalArgumentException ex) {
				throw invalid("attribute '" + attribute + "'", raw, "has a placeholder that cannot be resolved: " + ex.getMessage());
			}
		}

		/**
		 * The text of a SpEL attribute, which is code: never resolved from configuration, where a property could
		 * inject an expression that runs with the application's rights.
		 */
		String expression(String attribute, String raw) {
			if (!StringUtils.hasText(raw)) {
				return null;
			}
			if (raw.contains("${")) {
				throw invalid("attribute '" + attribute + "'", raw, "contains a ${...} placeholder: " + attribute
						+ " is a SpEL expression, evaluated with the application's rights, so it is never taken from "
						+ "configuration; read a setting through a bean instead, e.g. @settings.tenantHeader");
			}
			return raw;
		}

		/** The overrides, over the annotation's attributes (placeholders resolved), its policy and the defaults. */
		RateLimitSettings settings(Map<String, String> overrides) {
			if (this.annotation.algorithm().length > 1) {
				throw invalid("attribute 'algorithm'", Arrays.toString(this.annotation.algorithm()),
						"must name at most one algorithm");
			}
			Map<String, String> attributes = new LinkedHashMap<>();
			RateLimitSettings.attributes(this.annotation).forEach((name, raw) -> {
				String text = text(name, raw);
				if (text != null) {
					attributes.put(name, text);
				}
			});
			return RateLimitSettings.overlay(overrides, attributes, this.policyName, this.policy,
					RateLimitAnnotationParser.this.properties.getDefaults(), this.where);
		}

		void acceptedBy(Algorithm algorithm, Setting<?> setting, Algorithm accepting) {
			if (setting.explicit() && algorithm != accepting) {
				throw invalid(setting.origin(), setting.text(), "is not accepted by the " + algorithm + " algorithm"
						+ ((accepting != null) ? " (only by " + accepting + ")" : " without a calendar"));
			}
		}

		Resolver required(Setting<?> setting) {
			if (setting.value() == null) {
				throw invalid(setting.origin(), "", "is required: set it on the annotation, in its policy or in limiter.defaults");
			}
			return this;
		}

		void positive(Setting<Long> setting) {
			if (setting.value() <= 0) {
				throw invalid(setting.origin(), setting.text(), "must be positive");
			}
		}

		IllegalStateException invalid(String origin, String value, String problem) {
			return RateLimitAnnotationParser.invalid(this.where, origin, value, problem);
		}

	}

}
