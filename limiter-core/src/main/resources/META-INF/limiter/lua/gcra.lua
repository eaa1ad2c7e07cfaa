-- Generic cell rate algorithm: token bucket and nginx-style leaky bucket
-- (io.github.limiter.algorithm.TokenBucket, LeakyBucket, Gcra).
-- State: one string, the theoretical arrival time in microseconds ('%.17g', exact), expiring when the bucket is full.
-- Parameters 'gc': {capacity, interval (microseconds per permit), queue (1 = report the delay),
-- max delay (microseconds a queued call accepts to wait, -1 for the bucket's own bound)}.
-- Same arithmetic, in the same order, as the Java class.

local function gcra_evaluate(key, code, p, now, cost)
  local capacity, interval, queue, max_ahead = p[1], p[2], p[3], p[4]
  local full = capacity * interval
  -- Compared as durations from now, which are exact where absolute times are not.
  local ahead = 0
  local tat = tonumber(kv_get(key))
  if tat then
    ahead = math.max(tat - now, 0)
  end
  local wait = ahead + cost * interval
  -- A bound on the delay is a smaller tolerance for this call: admitted when ahead <= max_ahead.
  local tolerance, per_permit = full, full
  if max_ahead >= 0 then
    tolerance = math.min(full, max_ahead + cost * interval)
    per_permit = math.min(full, max_ahead + interval)
  end
  local allowed = wait - tolerance <= 1e-3
  local ahead_after = ahead
  local retry = math.max(1, math.ceil(wait - tolerance))
  local delay = 0
  local after = tat or now
  if allowed then
    ahead_after = wait
    after = now + wait
    retry = 0
    if queue == 1 then
      delay = math.ceil(ahead)
    end
  end
  local remaining = math.max(0, math.min(capacity, math.floor((per_permit - ahead_after) / interval + 1e-9)))
  return {allowed, remaining, retry, math.ceil(ahead_after), delay, after}
end

local function gcra_store(key, tat, now)
  if tat <= now then
    kv_del(key)
  else
    kv_set(key, string.format('%.17g', tat), ttl_millis(tat - now))
  end
end

ALGORITHMS['gc'] = {
  evaluate = gcra_evaluate,
  commit = function(key, code, p, now, cost, outcome, token)
    gcra_store(key, outcome[6], now)
  end,
  record = function(key, code, p, now, cost, token)
    local tat = tonumber(kv_get(key)) or now
    gcra_store(key, math.min(math.max(tat, now) + cost * p[2], now + p[1] * p[2]), now)
  end,
  refund = function(key, code, p, now, cost, token, charged)
    local tat = tonumber(kv_get(key))
    if tat then
      gcra_store(key, tat - cost * p[2], now)
      kv_flush()
    end
  end
}
