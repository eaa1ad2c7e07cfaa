#!/usr/bin/env bash
# Starts the sample application with the README's command (on its embedded Redis), waits until it is up, runs the
# README's curl walkthrough against it, and stops it. Used by .ci/run so the front-door commands cannot rot.
set -euo pipefail
cd "$(dirname "$0")/.."
log=$(mktemp)
./mvnw -pl limiter-sample-app -am spring-boot:run >"$log" 2>&1 &
runner=$!
stop() { kill "$runner" 2>/dev/null || true; pkill -f 'io.github.limiter.sample.SampleApplication' 2>/dev/null || true; wait "$runner" 2>/dev/null || true; }
trap stop EXIT
for i in $(seq 1 180); do
  if curl -sf http://localhost:8080/actuator/health >/dev/null 2>&1; then break; fi
  if ! kill -0 "$runner" 2>/dev/null; then cat "$log"; echo "sample-smoke: the sample did not start" >&2; exit 1; fi
  sleep 1
done
curl -sf http://localhost:8080/actuator/health >/dev/null || { tail -50 "$log"; echo "sample-smoke: not up after 180 s" >&2; exit 1; }
./scripts/walkthrough.sh
