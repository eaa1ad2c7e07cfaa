package io.github.limiter.spring.interceptor;

import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import io.github.limiter.algorithm.Algorithm;
import io.github.limiter.spring.annotation.RateLimit;
import io.github.limiter.spring.autoconfigure.RateLimiterAutoConfiguration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A bad annotation or property fails startup with a message naming the class, the method, the attribute (or
 * property) and the value.
 */
class StartupFailureTests {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(RateLimiterAutoConfiguration.class))
		.withPropertyValues("limiter.backend=local");

	private void assertStartupFails(Class<?> bean, String message, String... properties) {
		this.runner.withBean(bean).withPropertyValues(properties).run(context -> {
			assertThat(context).hasFailed();
			assertThat(context.getStartupFailure()).rootCause().hasMessage(message);
		});
	}

	@Test
	void invalidSpel() {
		this.runner.withBean(InvalidSpel.class).run(context -> {
			assertThat(context).hasFailed();
			assertThat(context.getStartupFailure()).rootCause()
				.hasMessageStartingWith("Invalid @RateLimit on " + InvalidSpel.class.getName()
						+ ".call(java.lang.String): attribute 'key' = '#user +' is not a valid SpEL expression: ")
				.hasMessageContaining("EL1042E");
		});
	}

	@Test
	void aKeyNamingABeanTheApplicationDoesNotDefine() {
		assertStartupFails(UnknownBean.class, "Invalid @RateLimit on " + UnknownBean.class.getName()
				+ ".call(java.lang.String): attribute 'key' = '@nobody.tenantOf(#user)' refers to the bean 'nobody', which "
				+ "the application does not define");
		this.runner.withBean(UnknownBean.class).withBean("nobody", Tenants.class).run(context -> assertThat(context)
			.hasNotFailed());
	}

	static class UnknownBean {

		@RateLimit(key = "@nobody.tenantOf(#user)", max = "1", window = "1m")
		public void call(String user) {
		}

	}

	static class Tenants {

		public String tenantOf(String user) {
			return "t-" + user;
		}

	}

	@Test
	void unknownParameterName() {
		assertStartupFails(UnknownParameter.class, "Invalid @RateLimit on " + UnknownParameter.class.getName()
				+ ".call(java.lang.String): attribute 'key' = '#usr' refers to #usr, which is neither a parameter of the "
				+ "method (user) nor one of #ip, #request, #principal");
	}

	@Test
	void aPlaceholderInAKeyIsRefusedBecauseConfigurationMustNotBecomeCode() {
		assertStartupFails(PlaceholderKey.class, "Invalid @RateLimit on " + PlaceholderKey.class.getName()
				+ ".call(java.lang.String): attribute 'key' = '${tenant.key}' contains a ${...} placeholder: key is a SpEL "
				+ "expression, evaluated with the application's rights, so it is never taken from configuration; read a "
				+ "setting through a bean instead, e.g. @settings.tenantHeader",
				"tenant.key=T(java.lang.Runtime).getRuntime().exec('touch /tmp/owned')");
	}

	@Test
	void aPlaceholderInRecordIfIsRefused() {
		this.runner.withBean(PlaceholderRecordIf.class).run(context -> {
			assertThat(context).hasFailed();
			assertThat(context.getStartupFailure()).rootCause()
				.hasMessageStartingWith("Invalid @RateLimit on " + PlaceholderRecordIf.class.getName()
						+ ".call(java.lang.String): attribute 'recordIf' = '${failed:#result == null}' contains a ${...} "
						+ "placeholder");
		});
	}

	@Test
	void aConditionIsCheckedAtStartupLikeAKey() {
		assertStartupFails(UnknownConditionVariable.class, "Invalid @RateLimit on "
				+ UnknownConditionVariable.class.getName() + ".call(java.lang.String): attribute 'condition' = "
				+ "'#plan == null' refers to #plan, which is neither a parameter of the method (user) nor one of #ip, "
				+ "#request, #principal");
		this.runner.withBean(PlaceholderCondition.class).run(context -> {
			assertThat(context).hasFailed();
			assertThat(context.getStartupFailure()).rootCause()
				.hasMessageStartingWith("Invalid @RateLimit on " + PlaceholderCondition.class.getName()
						+ ".call(java.lang.String): attribute 'condition' = '${skip:true}' contains a ${...} placeholder");
		});
	}

	@Test
	void aBadAnnotationFailsStartupEvenWithLazyInitialization() {
		org.springframework.boot.builder.SpringApplicationBuilder application = new org.springframework.boot.builder.SpringApplicationBuilder(
				LazyApplication.class)
			.web(org.springframework.boot.WebApplicationType.NONE)
			.properties("spring.main.lazy-initialization=true", "limiter.backend=local", "spring.main.banner-mode=off");
		org.assertj.core.api.Assertions.assertThatIllegalStateException()
			.isThrownBy(() -> application.run().close())
			.withMessage("Invalid @RateLimit on " + ZeroLimit.class.getName() + ".call(): attribute 'max' = '0' must be positive");
	}

	@org.springframework.context.annotation.Configuration(proxyBeanMethods = false)
	@org.springframework.boot.autoconfigure.ImportAutoConfiguration(io.github.limiter.spring.autoconfigure.RateLimiterAutoConfiguration.class)
	@org.springframework.context.annotation.Import(ZeroLimit.class)
	static class LazyApplication {

	}

	@Test
	void unknownPolicy() {
		assertStartupFails(UnknownPolicy.class, "Invalid @RateLimit on " + UnknownPolicy.class.getName()
				+ ".call(): attribute 'policy' = 'nope' names no policy under limiter.policies (defined: [known])",
				"limiter.policies.known.max=1");
	}

	@Test
	void zeroLimit() {
		assertStartupFails(ZeroLimit.class,
				"Invalid @RateLimit on " + ZeroLimit.class.getName() + ".call(): attribute 'max' = '0' must be positive");
	}

	@Test
	void negativeWindow() {
		assertStartupFails(NegativeWindow.class, "Invalid @RateLimit on " + NegativeWindow.class.getName()
				+ ".call(): attribute 'window' = '-1s' must be a positive duration");
	}

	@Test
	void unreadableNumber() {
		assertStartupFails(UnreadableNumber.class, "Invalid @RateLimit on " + UnreadableNumber.class.getName()
				+ ".call(): attribute 'max' = 'ten' cannot be read: For input string: \"ten\"");
	}

	@Test
	void attributeTheAlgorithmDoesNotAccept() {
		assertStartupFails(BurstOnTokenBucket.class, "Invalid @RateLimit on " + BurstOnTokenBucket.class.getName()
				+ ".call(): attribute 'burst' = '5' is not accepted by the TOKEN_BUCKET algorithm (only by LEAKY_BUCKET)");
	}

	@Test
	void missingWindow() {
		assertStartupFails(MissingWindow.class, "Invalid @RateLimit on " + MissingWindow.class.getName()
				+ ".call(): window = '' is required: set it on the annotation, in its policy or in limiter.defaults");
	}

	@Test
	void costAboveCapacity() {
		assertStartupFails(CostAboveCapacity.class, "Invalid @RateLimit on " + CostAboveCapacity.class.getName()
				+ ".call(): attribute 'cost' = '5' exceeds the capacity 3 of the limit, so no call could ever pass");
	}

	@Test
	void missingFallback() {
		assertStartupFails(MissingFallback.class, "Invalid @RateLimit on " + MissingFallback.class.getName()
				+ ".call(java.lang.String): attribute 'fallback' = 'nothing': no method nothing with the parameters of the "
				+ "limited method (optionally followed by a RateLimitExceededException) in " + MissingFallback.class.getName());
	}

	@Test
	void aFallbackMustReturnWhatTheLimitedMethodReturnsTypeArgumentsIncluded() {
		assertStartupFails(FallbackOfOtherElements.class, "Invalid @RateLimit on "
				+ FallbackOfOtherElements.class.getName() + ".names(): attribute 'fallback' = 'numbers': method numbers"
				+ " returns java.util.List<java.lang.Integer>, which the limited method's return type"
				+ " java.util.List<java.lang.String> cannot hold");
	}

	static class FallbackOfOtherElements {

		@RateLimit(max = "3", window = "1s", fallback = "numbers")
		public java.util.List<String> names() {
			return java.util.List.of("a");
		}

		java.util.List<Integer> numbers() {
			return java.util.List.of(1);
		}

	}

	@Test
	void aFallbackMustNotThrowACheckedExceptionTheLimitedMethodDoesNotDeclare() {
		assertStartupFails(FallbackThrowingChecked.class, "Invalid @RateLimit on "
				+ FallbackThrowingChecked.class.getName() + ".call(): attribute 'fallback' = 'later': method later may"
				+ " throw java.io.IOException, which the limited method does not declare: its caller would get an"
				+ " UndeclaredThrowableException");
	}

	static class FallbackThrowingChecked {

		@RateLimit(max = "3", window = "1s", fallback = "later")
		public String call() {
			return "now";
		}

		String later() throws java.io.IOException {
			throw new java.io.IOException("later");
		}

	}

	@Test
	void aFallbackThatIsTheLimitedMethodItselfWouldRunItUnlimited() {
		assertStartupFails(FallbackToItself.class, "Invalid @RateLimit on " + FallbackToItself.class.getName()
				+ ".call(java.lang.String): attribute 'fallback' = 'call': the fallback is the limited method itself: a "
				+ "rejected call would run it anyway, unlimited; name another method");
		// An overload that takes the rejection is another method, and a fallback like any other.
		this.runner.withBean(FallbackToItsOverload.class).run(context -> {
			assertThat(context).hasNotFailed();
			FallbackToItsOverload bean = context.getBean(FallbackToItsOverload.class);
			assertThat(bean.call("a")).isEqualTo("a");
			assertThat(bean.call("a")).isEqualTo("later a");
		});
	}

	static class FallbackToItself {

		@RateLimit(max = "1", window = "1h", fallback = "call")
		public String call(String id) {
			return id;
		}

	}

	static class FallbackToItsOverload {

		@RateLimit(max = "1", window = "1h", fallback = "call")
		public String call(String id) {
			return id;
		}

		String call(String id, io.github.limiter.RateLimitExceededException rejection) {
			return "later " + id;
		}

	}

	@Test
	void aFallbackWithALimitOfItsOwnWhichAFallbackCallWouldNeverApply() {
		assertStartupFails(LimitedFallback.class, "Invalid @RateLimit on " + LimitedFallback.class.getName()
				+ ".call(java.lang.String): attribute 'fallback' = 'cheaper': method cheaper has a @RateLimit of its own,"
				+ " which would never apply to it as a fallback: a fallback is called on the bean itself, not through"
				+ " its proxy; move the limited code to another bean, or have both call an unlimited method");
	}

	static class LimitedFallback {

		@RateLimit(max = "1", window = "1h", fallback = "cheaper")
		public String call(String id) {
			return id;
		}

		@RateLimit(max = "5", window = "1h")
		public String cheaper(String id) {
			return "cheaper " + id;
		}

	}

	@Test
	void aConditionThatAssignsInsteadOfComparing() {
		this.runner.withBean(AssigningCondition.class).run(context -> {
			assertThat(context).hasFailed();
			assertThat(context.getStartupFailure()).rootCause()
				.hasMessageStartingWith("Invalid @RateLimit on " + AssigningCondition.class.getName()
						+ ".call(java.lang.String): attribute 'condition' = '#plan = 'free'' assigns a value (")
				.hasMessageEndingWith("); to compare, write ==");
		});
	}

	static class AssigningCondition {

		@RateLimit(max = "3", window = "1s", condition = "#plan = 'free'")
		public void call(String plan) {
		}

	}

	@Test
	void fallbacksThatSignalTheirFailuresOrAreGenericStart() {
		this.runner.withBean(SignallingFallbacks.class).run(context -> assertThat(context).hasNotFailed());
	}

	static class SignallingFallbacks {

		// A reactive or stage method's fallback fails its stream or stage: it may throw what it likes.
		@RateLimit(max = "3", window = "1s", fallback = "later")
		public reactor.core.publisher.Mono<String> load(String id) {
			return reactor.core.publisher.Mono.just(id);
		}

		reactor.core.publisher.Mono<String> later(String id) throws java.io.IOException {
			throw new java.io.IOException("later");
		}

		@RateLimit(max = "3", window = "1s", fallback = "laterStage")
		public java.util.concurrent.CompletionStage<String> stage(String id) {
			return java.util.concurrent.CompletableFuture.completedFuture(id);
		}

		java.util.concurrent.CompletionStage<String> laterStage(String id) throws java.io.IOException {
			throw new java.io.IOException("later");
		}

		@RateLimit(max = "3", window = "1s", fallback = "none")
		public java.util.Optional<String> find(String id) {
			return java.util.Optional.of(id);
		}

		<R> java.util.Optional<R> none(String id) {
			return java.util.Optional.empty();
		}

	}

	@Test
	void unresolvablePlaceholder() {
		assertStartupFails(UnresolvablePlaceholder.class, "Invalid @RateLimit on " + UnresolvablePlaceholder.class.getName()
				+ ".call(): attribute 'max' = '${nowhere}' has a placeholder that cannot be resolved: "
				+ "Could not resolve placeholder 'nowhere' in value \"${nowhere}\"");
	}

	@Test
	void finalMethodCannotBeIntercepted() {
		assertStartupFails(FinalMethod.class, "Invalid @RateLimit on " + FinalMethod.class.getName()
				+ ".call(): the method is final, so no proxy can intercept its calls and the limit would never apply");
	}

	@Test
	void aClassLimitOverAFinalPublicMethodFailsStartup() {
		assertStartupFails(ClassLimitedWithFinalMethod.class, "Invalid @RateLimit on class "
				+ ClassLimitedWithFinalMethod.class.getName() + ": it applies to every public method, and "
				+ ClassLimitedWithFinalMethod.class.getName() + ".sealed(java.lang.String) is final, so no proxy can"
				+ " intercept its calls and the limit would never apply to it; make the method not final, or annotate the"
				+ " methods one by one");
	}

	@Test
	void aClassLimitThatCoversNoMethodFailsStartup() {
		assertStartupFails(ClassLimitedWithoutPublicMethods.class, "Invalid @RateLimit on class "
				+ ClassLimitedWithoutPublicMethods.class.getName() + ": it applies to every public instance method, and"
				+ " the class has none (its package-private and protected methods are not covered), so the limit would"
				+ " never apply; make the methods to limit public, or annotate them one by one");
	}

	/** A controller's handlers are often package-private: a class limit does not cover them. */
	@RateLimit(max = "1", window = "1m")
	static class ClassLimitedWithoutPublicMethods {

		String hello() {
			return "hello";
		}

		protected String bye() {
			return "bye";
		}

		@Override
		public String toString() {
			return "ClassLimitedWithoutPublicMethods";
		}

	}

	@RateLimit(max = "1", window = "1m")
	static class ClassLimitedWithFinalMethod {

		public void open() {
		}

		public final void sealed(String user) {
		}

		public static void helper() {
		}

	}

	@Test
	void aFinalMethodLimitedByItsInterfaceFailsStartup() {
		assertStartupFails(FinalImplementation.class, "Invalid @RateLimit on " + FinalImplementation.class.getName()
				+ ".call(): the method is final, so no proxy can intercept its calls and the limit would never apply");
	}

	interface LimitedApi {

		@RateLimit(name = "api", max = "1", window = "1h")
		String call();

	}

	static class FinalImplementation implements LimitedApi {

		@Override
		public final String call() {
			return "ok";
		}

	}

	@Test
	void aFinalMethodInheritedFromAClassOutsideTheInterfaceFailsStartup() {
		assertStartupFails(InheritsFinalImplementation.class, "Invalid @RateLimit on " + LimitedApi.class.getName()
				+ ".call(): class " + InheritsFinalImplementation.class.getName() + " implements it with the final method "
				+ FinalBase.class.getName() + ".call(), so no proxy of the class can intercept its calls and the limit"
				+ " would never apply");
	}

	static class FinalBase {

		public final String call() {
			return "ok";
		}

	}

	static class InheritsFinalImplementation extends FinalBase implements LimitedApi {

	}

	@Test
	void aStaticOrPrivateInterfaceMethodFailsStartup() {
		assertStartupFails(ImplementsStaticLimited.class, "Invalid @RateLimit on " + StaticLimited.class.getName()
				+ ".lookup(java.lang.String): the method is static, so no proxy can intercept its calls and the limit"
				+ " would never apply");
		assertStartupFails(ImplementsPrivateLimited.class, "Invalid @RateLimit on " + PrivateLimited.class.getName()
				+ ".helper(): the method is private, so no proxy can intercept its calls and the limit would never apply");
	}

	interface StaticLimited {

		@RateLimit(max = "1", window = "1h")
		static String lookup(String id) {
			return id;
		}

	}

	static class ImplementsStaticLimited implements StaticLimited {

	}

	interface PrivateLimited {

		default String call() {
			return helper();
		}

		@RateLimit(max = "1", window = "1h")
		private String helper() {
			return "ok";
		}

	}

	interface ExtendsPrivateLimited extends PrivateLimited {

	}

	static class ImplementsPrivateLimited implements ExtendsPrivateLimited {

	}

	@Test
	void everyMethodBehindAnInterfaceProxyIsReadAtStartup() {
		this.runner.withBean(SecondMethodInvalid.class).withPropertyValues("spring.aop.proxy-target-class=false").run(context -> {
			assertThat(context).hasFailed();
			// Failed by the validator, or by the proxy if it happened to ask about z() first.
			assertThat(org.springframework.core.NestedExceptionUtils.getMostSpecificCause(context.getStartupFailure()))
				.hasMessageStartingWith("Invalid @RateLimit on "
					+ SecondMethodInvalid.class.getName() + ".z(): attribute 'max' = 'abc' cannot be read");
		});
	}

	interface TwoLimited {

		void a();

		void z();

	}

	static class SecondMethodInvalid implements TwoLimited {

		@Override
		@RateLimit(max = "1", window = "1h")
		public void a() {
		}

		@Override
		@RateLimit(max = "abc", window = "1h")
		public void z() {
		}

	}

	@Test
	void aComposedAnnotationOnAFinalOrPrivateMethodFailsStartup() {
		assertStartupFails(ComposedOnFinal.class, "Invalid @RateLimit on " + ComposedOnFinal.class.getName()
				+ ".call(): the method is final, so no proxy can intercept its calls and the limit would never apply");
		assertStartupFails(ComposedOnPrivate.class, "Invalid @RateLimit on " + ComposedOnPrivate.class.getName()
				+ ".call(): the method is private, so no proxy can intercept its calls and the limit would never apply");
	}

	@java.lang.annotation.Retention(java.lang.annotation.RetentionPolicy.RUNTIME)
	@java.lang.annotation.Target(java.lang.annotation.ElementType.METHOD)
	@RateLimit(max = "1", window = "1h")
	@interface OncePerHour {

	}

	static class ComposedOnFinal {

		@OncePerHour
		public final String call() {
			return "ok";
		}

	}

	static class ComposedOnPrivate {

		@OncePerHour
		private String call() {
			return "ok";
		}

	}

	@Test
	void privateMethodCannotBeIntercepted() {
		assertStartupFails(PrivateMethod.class, "Invalid @RateLimit on " + PrivateMethod.class.getName()
				+ ".call(): the method is private, so no proxy can intercept its calls and the limit would never apply");
	}

	@Test
	void sharedLimitDefinedTwoWays() {
		this.runner.withUserConfiguration(TwoDefinitions.class).run(context -> {
			assertThat(context).hasFailed();
			assertThat(context.getStartupFailure()).rootCause()
				.hasMessageContaining("limit 'shared' is")
				.hasMessageContaining("methods that share a limit by name must define it the same way");
		});
	}

	@Test
	void sharedLimitWithDifferentFailurePolicies() {
		this.runner.withBean(OpenShared.class).withBean(ClosedShared.class).run(context -> {
			assertThat(context).hasFailed();
			assertThat(context.getStartupFailure()).rootCause()
				.hasMessageContaining("on failure")
				.hasMessageContaining("methods that share a limit by name must define it the same way");
		});
	}

	@Test
	void unnamedLimitsOfClassesWithTheSameSimpleNameMustBeNamedApart() {
		this.runner.withBean(Admin.Users.class).withBean(Api.Users.class).run(context -> {
			assertThat(context).hasFailed();
			assertThat(context.getStartupFailure()).rootCause()
				.hasMessageContaining("its limit has no name, and its default name 'Users.list' is also the name of a limit on")
				.hasMessageContaining(Admin.Users.class.getName() + ".list()")
				.hasMessageContaining(Api.Users.class.getName() + ".list()")
				.hasMessageContaining("set attribute 'name' on one of them");
		});
	}

	@Test
	void classesWithTheSameSimpleNameShareALimitOnlyWhenTheyNameIt() {
		this.runner.withBean(Admin.Users.class).withBean(Api.Users.class).withPropertyValues("users.limit=users")
			.run(context -> assertThat(context).hasNotFailed());
	}

	static class Admin {

		static class Users {

			@RateLimit(name = "${users.limit:}", max = "1", window = "1m")
			public void list() {
			}

		}

	}

	static class Api {

		static class Users {

			@RateLimit(name = "${users.limit:}", max = "1", window = "1m")
			public void list() {
			}

		}

	}

	@Test
	void recordIfOnAStream() {
		this.runner.withBean(StreamRecordIf.class).run(context -> {
			assertThat(context).hasFailed();
			assertThat(context.getStartupFailure()).rootCause()
				.hasMessageContaining("attribute 'recordIf' = '#result' applies to single results only, and Flux is a stream");
		});
	}

	static class OpenShared {

		@RateLimit(name = "stock", max = "3", window = "1s", onFailure = "open")
		public void call() {
		}

	}

	static class ClosedShared {

		@RateLimit(name = "stock", max = "3", window = "1s", onFailure = "closed")
		public void call() {
		}

	}

	static class StreamRecordIf {

		@RateLimit(max = "3", window = "1s", recordIf = "#result")
		public reactor.core.publisher.Flux<Boolean> call() {
			return reactor.core.publisher.Flux.just(true);
		}

	}

	@Test
	void invalidPolicyProperty() {
		assertStartupFails(Fine.class, "Invalid limiter.policies.login.max = '0': must be positive",
				"limiter.policies.login.max=0");
	}

	@Test
	void invalidPolicyWindow() {
		assertStartupFails(Fine.class, "Invalid limiter.policies.login.window = '0s': must be a positive duration",
				"limiter.policies.login.window=0s");
	}

	@Test
	void policyAttributeTheAlgorithmDoesNotAccept() {
		assertStartupFails(WithPolicy.class, "Invalid @RateLimit on " + WithPolicy.class.getName()
				+ ".call(): limiter.policies.p.capacity = '10' is not accepted by the FIXED_WINDOW algorithm (only by TOKEN_BUCKET)",
				"limiter.policies.p.capacity=10", "limiter.policies.p.algorithm=fixed-window", "limiter.policies.p.max=5",
				"limiter.policies.p.window=1m");
	}

	@Test
	void calendarWithWindow() {
		assertStartupFails(CalendarWithWindow.class, "Invalid @RateLimit on " + CalendarWithWindow.class.getName()
				+ ".call(): attribute 'window' = '1d' cannot be combined with attribute 'calendar' = 'day': a calendar window "
				+ "has the length of its period");
	}

	static class Fine {

		@RateLimit(max = "1", window = "1m")
		public void call() {
		}

	}

	static class InvalidSpel {

		@RateLimit(key = "#user +", max = "1", window = "1m")
		public void call(String user) {
		}

	}

	static class PlaceholderKey {

		@RateLimit(key = "${tenant.key}", max = "1", window = "1m")
		public void call(String user) {
		}

	}

	static class PlaceholderRecordIf {

		@RateLimit(recordIf = "${failed:#result == null}", max = "1", window = "1m")
		public String call(String user) {
			return user;
		}

	}

	static class UnknownConditionVariable {

		@RateLimit(key = "#user", max = "1", window = "1m", condition = "#plan == null")
		public void call(String user) {
		}

	}

	static class PlaceholderCondition {

		@RateLimit(key = "#user", max = "1", window = "1m", condition = "${skip:true}")
		public void call(String user) {
		}

	}

	static class UnknownParameter {

		@RateLimit(key = "#usr", max = "1", window = "1m")
		public void call(String user) {
		}

	}

	static class UnknownPolicy {

		@RateLimit(policy = "nope")
		public void call() {
		}

	}

	static class ZeroLimit {

		@RateLimit(max = "0", window = "1m")
		public void call() {
		}

	}

	static class NegativeWindow {

		@RateLimit(max = "1", window = "-1s")
		public void call() {
		}

	}

	static class UnreadableNumber {

		@RateLimit(max = "ten", window = "1s")
		public void call() {
		}

	}

	static class BurstOnTokenBucket {

		@RateLimit(max = "1", window = "1s", burst = "5", algorithm = Algorithm.TOKEN_BUCKET)
		public void call() {
		}

	}

	static class MissingWindow {

		@RateLimit(max = "1")
		public void call() {
		}

	}

	static class CostAboveCapacity {

		@RateLimit(max = "3", window = "1s", cost = "5")
		public void call() {
		}

	}

	static class MissingFallback {

		@RateLimit(max = "3", window = "1s", fallback = "nothing")
		public String call(String in) {
			return in;
		}

	}

	static class UnresolvablePlaceholder {

		@RateLimit(max = "${nowhere}", window = "1s")
		public void call() {
		}

	}

	static class FinalMethod {

		@RateLimit(max = "3", window = "1s")
		public final void call() {
		}

	}

	static class PrivateMethod {

		@RateLimit(max = "3", window = "1s")
		private void call() {
		}

		public void other() {
			call();
		}

	}

	static class WithPolicy {

		@RateLimit(policy = "p")
		public void call() {
		}

	}

	static class CalendarWithWindow {

		@RateLimit(max = "1", window = "1d", calendar = "day", algorithm = Algorithm.FIXED_WINDOW)
		public void call() {
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class TwoDefinitions {

		@Bean
		First first() {
			return new First();
		}

		@Bean
		Second second() {
			return new Second();
		}

	}

	static class First {

		@RateLimit(name = "shared", max = "3", window = "1s")
		public void call() {
		}

	}

	static class Second {

		@RateLimit(name = "shared", max = "4", window = "1s")
		public void call() {
		}

	}

}
