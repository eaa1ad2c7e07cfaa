-- Generic cell rate algorithm: token bucket and nginx-style leaky bucket
-- (io.github.limiter.algorithm.TokenBucket, LeakyBucket, Gcra).
-- Exact integer arithmetic: time is counted in ticks of 1/q microsecond, so that a permit takes a whole number of
-- ticks; every quantity is at most capacity x interval ticks (three times that with a warm-up), which Java keeps
-- within 2^53 (exact in Lua's doubles).
-- State: one string, the theoretical arrival time: whole microseconds, then ':' and the ticks of the next
-- microsecond when there are any; a warming bucket always writes the ticks and then ':' and its stored idleness
-- in whole microseconds.
-- It expires when the bucket is full (and, warming, cold again).
-- Parameters 'gc': {capacity, interval (ticks per permit), delay-free (permits in excess of the rate served
-- without a delay, nginx 'delay': 0 queues them all, the capacity none), max delay (microseconds a call accepts to
-- wait, -1 for the bucket's own bound), q (ticks per microsecond), and for a token bucket with a warm-up, the
-- warm-up period in ticks}.
-- Same arithmetic, in the same order, as the Java class. The warm-up is gcra_warmup.lua, composed after this file
-- only into the scripts of calls that have a warming bucket: a plain bucket's call does not define its functions.

-- Ticks from now to the stored arrival time, never more than the ceiling: 2^52 ticks for a plain bucket, three full
-- buckets for a warming one (a clock that went back). Also returns the state it read: whole microseconds, ticks and stored idleness (nothing
-- when there is no key).
local function gcra_ahead(key, p, now)
  local raw = kv_get(key)
  if not raw then
    return 0
  end
  local micros, ticks, stored = tonumber(raw), 0, 0
  if not micros then
    local sep = string.find(raw, ':', 1, true)
    local rest = string.sub(raw, sep + 1)
    micros, ticks = tonumber(string.sub(raw, 1, sep - 1)), tonumber(rest)
    if not ticks then
      local sep2 = string.find(rest, ':', 1, true)
      ticks, stored = tonumber(string.sub(rest, 1, sep2 - 1)), tonumber(string.sub(rest, sep2 + 1))
    end
  end
  if micros < now then
    return 0, micros, ticks, stored
  end
  local q, ceiling = p[5], p[1] * p[2]
  if p[6] then
    ceiling = 3 * ceiling
  elseif ceiling < 4503599627370496 then
    -- A plain bucket reads an arrival time up to 2^52 ticks ahead (years), so that one left by a larger capacity (a
    -- retuned limit) is read as it is and a refusal's retry-after says when the call can pass (Gcra.readCeiling).
    ceiling = 4503599627370496
  end
  local d = micros - now
  if d > ((q == 1) and ceiling or (ceiling - math.fmod(ceiling, q)) / q) + 1 then
    return ceiling, micros, ticks, stored
  end
  -- (ceil: a value written by an earlier version, a double with a fraction, rounds up to whole ticks)
  local ahead = math.ceil(d * q) + ticks
  if ahead > ceiling then
    ahead = ceiling
  end
  return ahead, micros, ticks, stored
end

-- Defined by gcra_warmup.lua, for the buckets whose parameters have a warm-up.
local gcra_warm_evaluate, gcra_warm_store, gcra_warm_record, gcra_warm_refund

-- a / q rounded up, for integers a >= 0 (fmod is exact, so is the division of a multiple). Most buckets count in
-- whole microseconds (q = 1), which needs no division at all.
local function ceil_div(a, q)
  if q == 1 then
    return a
  end
  local r = math.fmod(a, q)
  if r == 0 then
    return a / q
  end
  return (a - r) / q + 1
end

local function gcra_evaluate(key, code, p, now, cost)
  if p[6] then
    return gcra_warm_evaluate(key, p, now, cost)
  end
  local capacity, interval, max_delay, q = p[1], p[2], p[4], p[5]
  local tolerance = capacity * interval
  -- (comparisons rather than math.min and math.max on this road, which runs for every decision: a call of a library
  -- function costs more than the arithmetic)
  local free = p[3]
  if free > capacity then
    free = capacity
  end
  free = free * interval
  local ahead = gcra_ahead(key, p, now)
  local wait = ahead + cost * interval
  -- A bound on the delay is a smaller tolerance for this call: admitted when its delay is within the bound.
  local limit, per_permit = tolerance, tolerance
  if max_delay >= 0 then
    local bound = math.min(max_delay, ceil_div(tolerance, q)) * q + free
    limit = math.min(tolerance, bound + cost * interval)
    per_permit = math.min(tolerance, bound + interval)
  end
  local allowed = wait <= limit
  local ahead_after = ahead
  local retry = 0
  local delay = 0
  if allowed then
    ahead_after = wait
    if ahead > free then
      delay = ceil_div(ahead - free, q)
    end
  else
    retry = math.max(1, ceil_div(wait - limit, q))
  end
  local remaining = 0
  if per_permit > ahead_after then
    local free = per_permit - ahead_after
    remaining = (free - math.fmod(free, interval)) / interval
    if remaining > capacity then
      remaining = capacity
    end
  end
  return allowed, remaining, retry, ceil_div(ahead_after, q), delay, ahead_after
end

-- Writes the arrival time 'ahead' ticks from now (and, warming, the idleness 'stored'): an admission's commit, and
-- what record and refund store (with neither cost nor token, which it does not read).
local function gcra_store(key, code, p, now, cost, token, ahead, stored)
  if p[6] then
    gcra_warm_store(key, ahead, p, now, stored)
    return
  end
  if ahead <= 0 then
    kv_set(key, false)
    return
  end
  local q = p[5]
  local ticks = (q == 1) and 0 or math.fmod(ahead, q)
  local micros = now + (ahead - ticks) / q
  if ticks == 0 then
    kv_set(key, string.format('%d', micros), ttl_millis(micros - now))
  else
    kv_set(key, string.format('%d:%d', micros, ticks), ttl_millis(micros + 1 - now))
  end
end

ALGORITHMS['gc'] = {evaluate = gcra_evaluate, commit = gcra_store}

if general then
  -- What a refund gives back: the call's time less what has drained since it was charged (its slice drains at most as
  -- fast as time passes, and only after the slices before it), so never time that later calls hold.
  local function gcra_refunded(p, now, cost, charged)
    local slice = cost * p[2]
    local elapsed = math.max(0, now - charged)
    if elapsed >= ceil_div(slice, p[5]) then
      return 0
    end
    return slice - elapsed * p[5]
  end

  ALGORITHMS['gc'].record = function(key, code, p, now, cost, token)
    if p[6] then
      gcra_warm_record(key, p, now, cost)
    else
      gcra_store(key, code, p, now, nil, nil, math.min(gcra_ahead(key, p, now) + cost * p[2], p[1] * p[2]))
    end
  end

  ALGORITHMS['gc'].refund = function(key, code, p, now, cost, token, charged)
    local given = gcra_refunded(p, now, cost, charged)
    if given == 0 then
      return
    end
    if p[6] then
      gcra_warm_refund(key, p, now, given)
    elseif kv_get(key) then
      gcra_store(key, code, p, now, nil, nil, math.max(0, gcra_ahead(key, p, now) - given))
    end
  end
end
