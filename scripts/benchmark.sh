#!/usr/bin/env bash
# Reruns the benchmarks of docs/benchmarks.md. Usage:
#   scripts/benchmark.sh redis [harness options]   the Redis load harness (about 15 minutes)
#   scripts/benchmark.sh local                     JMH: local decisions next to Guava, Bucket4j, Resilience4j
#   scripts/benchmark.sh annotation                JMH: what @RateLimit adds to a call
#   scripts/benchmark.sh client                    JMH: the Redis backend's own cost in the JVM, Redis left out
#   scripts/benchmark.sh smoke                     all of them for a few seconds each (CI: the harness cannot rot)
#   scripts/benchmark.sh profile "<contender>" [callers] [workload]
#                                                  one contender of the harness alone, the whole machine sampled by
#                                                  perf: where each decision's time goes (scripts/machine-profile.py)
# Harness options: --callers=1,8,64 --workloads=hot,keys,flood --only=<name>,... --warmup=2 --measure=5
#                  --redis-cpus=1 (Redis on CPU 1, the load generator on the others: Redis with a core of its own)
set -euo pipefail
cd "$(dirname "$0")/.."

mode="${1:-}"
[ $# -gt 0 ] && shift
case "$mode" in
	redis|local|annotation|client|smoke|profile) ;;
	*) echo "usage: $0 redis|local|annotation|client|smoke|profile [options]" >&2; exit 2 ;;
esac

./mvnw -q -Pbenchmarks -pl limiter-benchmarks -am install -DskipTests
./mvnw -q -Pbenchmarks -pl limiter-benchmarks dependency:build-classpath -Dmdep.outputFile=target/bench.cp
cp="limiter-benchmarks/target/classes:$(cat limiter-benchmarks/target/bench.cp)"

jmh() {
	java -cp "$cp" org.openjdk.jmh.Main "$@"
}

case "$mode" in
	redis)
		java -cp "$cp" io.github.limiter.benchmarks.redis.RedisLoadHarness --out=limiter-benchmarks/target/redis-load.md "$@"
		;;
	local)
		jmh LocalDecisionBenchmark -f 1 -wi 3 -i 5 -w 1s -r 1s -t 1 "$@"
		jmh LocalDecisionBenchmark -f 1 -wi 3 -i 5 -w 1s -r 1s -t 2 -bm thrpt -tu us "$@"
		;;
	annotation)
		jmh AnnotationOverheadBenchmark -f 1 -wi 3 -i 5 -w 1s -r 1s -t 1 "$@"
		;;
	client)
		jmh ClientPathBenchmark -f 1 -wi 3 -i 5 -w 1s -r 1s -t 1 -prof gc "$@"
		;;
	profile)
		python3 scripts/machine-profile.py --classpath "$cp" "$@"
		;;
	smoke)
		java -cp "$cp" io.github.limiter.benchmarks.redis.RedisLoadHarness --smoke --out=limiter-benchmarks/target/redis-load-smoke.md "$@"
		jmh "LocalDecisionBenchmark|AnnotationOverheadBenchmark|ClientPathBenchmark" -f 1 -wi 0 -i 1 -r 200ms -t 1
		;;
esac
