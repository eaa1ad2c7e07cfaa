#!/usr/bin/env bash
# The real-load check: three instances of the sample application on one Redis, each under wrk with 16 connections
# on POST /seckill/<random sku> for 30 s, which puts a 2-core machine far past saturation. Per run it reports the
# orders admitted by the three together (the global limit of 50 per second bounds them: its burst of 50, then 50 per
# second since the first order), the requests per second and p99 of each instance, and how many decisions the guard
# answered by its failure policy (the count its WARN lines give), which is what a busy JVM costs.
# Needs wrk and redis-server (apt-get install wrk redis-server). Usage:
#   scripts/real-load.sh [runs] [jar ...]
# Several jars are alternated run by run (an A/B of two builds); by default the sample built from this tree.
set -euo pipefail
cd "$(dirname "$0")/.."
runs="${1:-1}"
[ $# -gt 0 ] && shift
jars=("$@")
# The tools first: a missing one is said before minutes of building.
for tool in wrk redis-server redis-cli; do
	command -v "$tool" >/dev/null || { echo "real-load: $tool is missing (apt-get install wrk redis-server)" >&2; exit 2; }
done
if [ ${#jars[@]} -eq 0 ]; then
	jar=limiter-sample-app/target/limiter-sample-app-0.1.0-SNAPSHOT.jar
	[ -f "$jar" ] || ./mvnw -q -pl limiter-sample-app -am package -DskipTests
	jars=("$jar")
fi

work=$(mktemp -d)
redis_port=16390
while (exec 3<>"/dev/tcp/127.0.0.1/$redis_port") 2>/dev/null; do redis_port=$((redis_port + 1)); done
redis-server --port "$redis_port" --save '' --appendonly no >"$work/redis.log" 2>&1 &
redis=$!
pids=()
stop() {
	for pid in "${pids[@]:-}"; do [ -n "$pid" ] && kill "$pid" 2>/dev/null || true; done
	kill "$redis" 2>/dev/null || true
	wait 2>/dev/null || true
}
trap stop EXIT
for i in $(seq 1 50); do redis-cli -p "$redis_port" ping >/dev/null 2>&1 && break; sleep 0.1; done

cat >"$work/seckill.lua" <<'LUA'
local threads = {}
function setup(thread) table.insert(threads, thread) end
function init(args) admitted = 0 end
function request() return wrk.format("POST", "/seckill/" .. math.random(1, 100000)) end
function response(status, headers, body)
  if status == 200 and not string.find(body, "busy") then admitted = admitted + 1 end
end
function done(summary, latency, requests)
  local total = 0
  for _, t in ipairs(threads) do total = total + t:get("admitted") end
  io.write(string.format("admitted %d p99 %.1f\n", total, latency:percentile(99) / 1000))
end
LUA

echo "| run | build | orders admitted | requests/s per instance | p99 ms per instance | decisions answered by the failure policy |"
echo "|---|---|---|---|---|---|"
for run in $(seq 1 "$runs"); do
	jar="${jars[$(((run - 1) % ${#jars[@]}))]}"
	redis-cli -p "$redis_port" flushall >/dev/null
	pids=()
	for port in 18081 18082 18083; do
		java -jar "$jar" --server.port=$port --spring.data.redis.host=127.0.0.1 \
			--spring.data.redis.port="$redis_port" >"$work/instance-$run-$port.log" 2>&1 &
		pids+=($!)
	done
	for i in $(seq 1 120); do
		up=0
		for port in 18081 18082 18083; do
			curl -sf -o /dev/null "http://127.0.0.1:$port/actuator/health" && up=$((up + 1))
		done
		[ $up -eq 3 ] && break
		sleep 1
	done
	[ $up -eq 3 ] || { echo "real-load: the instances did not start (logs in $work)" >&2; trap - EXIT; stop; exit 1; }
	loads=()
	for port in 18081 18082 18083; do
		wrk -t1 -c16 -d30s -s "$work/seckill.lua" "http://127.0.0.1:$port" >"$work/wrk-$run-$port.txt" 2>&1 &
		loads+=($!)
	done
	for load in "${loads[@]}"; do wait "$load" || true; done
	admitted=0 rates="" p99s="" policy=0
	for port in 18081 18082 18083; do
		admitted=$((admitted + $(awk '/^admitted/ {print $2}' "$work/wrk-$run-$port.txt")))
		rates="$rates $(awk '/Requests\/sec/ {printf "%d", $2}' "$work/wrk-$run-$port.txt")"
		p99s="$p99s $(awk '/^admitted/ {print $4}' "$work/wrk-$run-$port.txt")"
		policy=$((policy + $({ grep -o 'Rate limiter: [0-9]* decisions failed or missed' \
			"$work/instance-$run-$port.log" || true; } | awk '{sum += $3} END {print sum + 0}')))
	done
	echo "| $run | $(basename "$jar") | $admitted | ${rates# } | ${p99s# } | $policy |"
	for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
	for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
	pids=()
done
echo "Logs: $work"
