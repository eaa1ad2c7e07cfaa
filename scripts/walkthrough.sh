#!/usr/bin/env bash
# The README's curl walkthrough, run against a sample application on localhost:8080 (or $SAMPLE_URL).
# CI runs it against the application started with the README's command; it fails when an answer is not the
# documented one.
set -euo pipefail
base="${SAMPLE_URL:-http://localhost:8080}"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "walkthrough: $*" >&2; exit 1; }
expect() { # expect <code> <curl args...>
  local want="$1"; shift
  local got
  got=$(curl -s -o /dev/null -w '%{http_code}' "$@")
  [ "$got" = "$want" ] || fail "curl $* answered $got, expected $want"
  printf '%s ' "$got"
}

# Fresh keys first: the sample's limits outlive a run (a message a day, failed logins for a minute), which a second
# run, or one after the README's commands typed by hand, would meet. The sample's endpoint allows resets; a client IP
# is 127.0.0.1, or ::1, kept as its /64 (a key with a '/' is reset through ?key=).
curl -s -o /dev/null "$base/actuator/health" || fail "no sample answers at $base (start it with the README's command)"
reset() { curl -s -o /dev/null -X DELETE "$base/actuator/ratelimiters/$1?key=$2" || fail "could not reset $1 $2"; }
for ip in 127.0.0.1 %3A%3A%2F64; do reset greeting "$ip"; reset login-per-ip "$ip"; done
for limit in login-failures:alice message-daily:u1 message-weekly:u1 seckill-sku:42 seckill-global:; do
  reset "${limit%%:*}" "${limit#*:}"
done

echo "== Greeting: a burst of 5 per client IP, then 429"
for i in 1 2 3 4 5; do expect 200 "$base/hello"; done
expect 429 "$base/hello"; echo
curl -si "$base/hello" | tee "$work/429.txt" | sed -n '1,8p'
grep -q '^RateLimit-Policy: "greeting";q=5;w=5' "$work/429.txt" || fail "no RateLimit-Policy header"
grep -q '^RateLimit: "greeting";r=0;t=[1-5]' "$work/429.txt" || fail "no RateLimit header"
grep -q '^Retry-After: 1' "$work/429.txt" || fail "no Retry-After of 1 s"
grep -q '"title":"Too Many Requests"' "$work/429.txt" || fail "no problem body"
echo

echo "== Failed logins: the fourth failure asks for a captcha"
for i in 1 2 3; do expect 401 -X POST "$base/login?username=alice&password=wrong"; done
curl -s -X POST "$base/login?username=alice&password=secret" | tee "$work/login.txt"; echo
grep -q '"captchaRequired":true' "$work/login.txt" || fail "no captcha"

echo "== Flash sale: a friendly answer once the SKU bucket is empty"
for i in $(seq 1 20); do curl -s -X POST "$base/seckill/42" >>"$work/seckill.txt"; echo >>"$work/seckill.txt"; done
grep '"status":"busy"' "$work/seckill.txt" | head -1
grep -q '"status":"busy"' "$work/seckill.txt" || fail "no degraded answer"
# The burst of 10 went through first (the bucket refills 5 per second, so a slow run may pass more).
[ "$(head -10 "$work/seckill.txt" | grep -c '"status":"busy"' || true)" = 0 ] || fail "the burst of 10 orders did not go through"

echo "== Messages: once per calendar day and 3 times per week, as one decision"
# The day starts at midnight in sample.zone (Europe/Paris in the sample's configuration, or $SAMPLE_ZONE): a midnight
# between the two messages would start a new day and admit the second. Close to one, wait until it has passed.
zone="${SAMPLE_ZONE:-Europe/Paris}"
if midnight=$(TZ="$zone" date -d 'tomorrow 00:00' +%s 2>/dev/null); then
  left=$((midnight - $(date +%s)))
  if [ "$left" -le 10 ]; then echo "(waiting ${left} s for midnight in $zone)"; sleep $((left + 1)); fi
fi
expect 200 -X POST "$base/messages/u1"
expect 429 -X POST "$base/messages/u1"; echo

echo "== Metrics and the endpoint"
curl -s "$base/actuator/metrics/limiter.decisions?tag=limit:greeting&tag=outcome:blocked" | tee "$work/metrics.txt"; echo
grep -q '"name":"limiter.decisions"' "$work/metrics.txt" || fail "no limiter.decisions meter"
curl -s "$base/actuator/ratelimiters/login-failures/alice" | tee "$work/state.txt"; echo
grep -q '"limit":"login-failures","key":"alice","capacity":3,"available":0' "$work/state.txt" || fail "no key state"
curl -s "$base/actuator/prometheus" >"$work/prometheus.txt" || fail "no Prometheus scrape"
grep '^limiter_decisions_total' "$work/prometheus.txt" | head -3 || true
grep -q '^limiter_decisions_total' "$work/prometheus.txt" || fail "no limiter_decisions_total in the scrape"
echo "walkthrough: all answers as documented"
