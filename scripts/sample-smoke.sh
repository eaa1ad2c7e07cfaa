#!/usr/bin/env bash
# Starts the sample application with the README's command (on its embedded Redis) on a free port, waits until it is
# up, runs the README's curl walkthrough against it, and stops it. Used by .ci/run so the front-door commands
# cannot rot.
set -euo pipefail
cd "$(dirname "$0")/.."
port=18080
while (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; do port=$((port + 1)); done
log=$(mktemp)
./mvnw -pl limiter-sample-app -am spring-boot:run -Dspring-boot.run.arguments=--server.port=$port >"$log" 2>&1 &
runner=$!
# Maven's shutdown hook stops the application it forked (and the application its embedded Redis).
stop() { kill "$runner" 2>/dev/null || true; wait "$runner" 2>/dev/null || true; rm -f "$log"; }
trap stop EXIT
for i in $(seq 1 240); do
  if grep -q "Tomcat started on port $port" "$log" && curl -sf "http://127.0.0.1:$port/actuator/health" >/dev/null 2>&1; then
    break
  fi
  if ! kill -0 "$runner" 2>/dev/null; then tail -80 "$log"; echo "sample-smoke: the sample did not start" >&2; exit 1; fi
  sleep 1
done
curl -sf "http://127.0.0.1:$port/actuator/health" >/dev/null || { tail -80 "$log"; echo "sample-smoke: not up after 240 s" >&2; exit 1; }
# Warm up the Redis connection and script (the health check makes one decision), so that no call of the
# walkthrough runs into the decision deadline on a slow machine.
curl -sf "http://127.0.0.1:$port/actuator/health/rateLimiter" >/dev/null
SAMPLE_URL="http://127.0.0.1:$port" ./scripts/walkthrough.sh
