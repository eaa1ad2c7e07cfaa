-- Generic cell rate algorithm: token bucket and nginx-style leaky bucket
-- (io.github.limiter.algorithm.TokenBucket, LeakyBucket, Gcra).
-- Exact integer arithmetic: time is counted in ticks of 1/q microsecond, so that a permit takes a whole number of
-- ticks; every quantity is at most capacity x interval ticks (three times that with a warm-up), which Java keeps
-- within 2^53 (exact in Lua's doubles).
-- State: one string, the theoretical arrival time: whole microseconds, then ':' and the ticks of the next
-- microsecond when there are any; a warming bucket always writes the ticks and then ':' and its stored idleness.
-- It expires when the bucket is full (and, warming, cold again).
-- Parameters 'gc': {capacity, interval (ticks per permit), delay-free (permits in excess of the rate served
-- without a delay, nginx 'delay': 0 queues them all, the capacity none), max delay (microseconds a call accepts to
-- wait, -1 for the bucket's own bound), q (ticks per microsecond), and for a token bucket with a warm-up, the
-- warm-up period in ticks}.
-- Same arithmetic, in the same order, as the Java class; the warm-up's surcharge and price are doubles, computed
-- with the same operations in the same order, so they agree to the bit.

-- The stored state: whole microseconds, ticks and stored idleness; nothing when there is no key.
local function gcra_read(key)
  local raw = kv_get(key)
  if not raw then
    return nil
  end
  local micros = tonumber(raw)
  if micros then
    return micros, 0, 0
  end
  local sep = string.find(raw, ':', 1, true)
  local rest = string.sub(raw, sep + 1)
  local ticks, stored = tonumber(rest), 0
  if not ticks then
    local sep2 = string.find(rest, ':', 1, true)
    ticks, stored = tonumber(string.sub(rest, 1, sep2 - 1)), tonumber(string.sub(rest, sep2 + 1))
  end
  return tonumber(string.sub(raw, 1, sep - 1)), ticks, stored
end

-- Ticks from now to the stored arrival time, never more than the ceiling (a clock that went back): a full bucket,
-- three for a warming one. Also returns the state it read.
local function gcra_ahead(key, p, now)
  local micros, ticks, stored = gcra_read(key)
  if not micros or micros < now then
    return 0, micros, ticks, stored
  end
  local q, ceiling = p[5], p[1] * p[2]
  if p[6] then
    ceiling = 3 * ceiling
  end
  local d = micros - now
  if d > (ceiling - math.fmod(ceiling, q)) / q + 1 then
    return ceiling, micros, ticks, stored
  end
  -- (ceil: a value written by an earlier version, a double with a fraction, rounds up to whole ticks)
  return math.min(ceiling, math.ceil(d * q) + ticks), micros, ticks, stored
end

-- a / q rounded up, for integers a >= 0 (fmod is exact, so is the division of a multiple).
local function ceil_div(a, q)
  local r = math.fmod(a, q)
  if r == 0 then
    return a / q
  end
  return (a - r) / q + 1
end

-- Warm-up (Java: Gcra). Stored idleness now, in ticks up to the warm-up period w: a new key is cold; idle time
-- accrues while the arrival time lies in the past.
local function gcra_stored(p, now, ahead, micros, ticks, stored)
  local w, q = p[6], p[5]
  if not micros then
    return w
  end
  if ahead > 0 or micros >= now then
    return math.min(w, stored)
  end
  if now - micros > (w - math.fmod(w, q)) / q + 1 then
    return w
  end
  return math.min(w, stored + (now - micros) * q - ticks)
end

-- Time beyond the stable interval that taking 'spent' ticks of stored idleness costs: the area under the line from
-- the stable interval at w/2 to three of it at w, over the part above w/2.
local function gcra_surcharge(w, stored, spent)
  local above = stored - w / 2
  if above <= 0 or spent == 0 then
    return 0
  end
  local taken = math.min(above, spent)
  return math.ceil(2 * taken * (2 * above - taken) / w)
end

-- Calls of one permit still admitted now, each at most at the present price of a permit.
local function gcra_warm_remaining(p, ahead, stored)
  local capacity, interval, w = p[1], p[2], p[6]
  local room = capacity * interval - interval - ahead
  if room < 0 then
    return 0
  end
  local above = math.max(0, stored - w / 2)
  local price = interval + 4 * interval * above / w
  return math.min(capacity, math.floor(room / price) + 1)
end

-- Admitted by the stable test; then the arrival time moves by the full price, stable interval and surcharge.
local function gcra_warm_evaluate(key, p, now, cost)
  local interval, q, tolerance = p[2], p[5], p[1] * p[2]
  local ahead, micros, ticks, stored = gcra_ahead(key, p, now)
  stored = gcra_stored(p, now, ahead, micros, ticks, stored)
  local wait = ahead + cost * interval
  if wait > tolerance then
    return {false, gcra_warm_remaining(p, ahead, stored), math.max(1, ceil_div(wait - tolerance, q)),
            ceil_div(ahead, q), 0, ahead, stored}
  end
  local spent = math.min(cost * interval, stored)
  local ahead_after = wait + gcra_surcharge(p[6], stored, spent)
  stored = stored - spent
  return {true, gcra_warm_remaining(p, ahead_after, stored), 0, ceil_div(ahead_after, q), 0, ahead_after, stored}
end

local function gcra_evaluate(key, code, p, now, cost)
  if p[6] then
    return gcra_warm_evaluate(key, p, now, cost)
  end
  local capacity, interval, max_delay, q = p[1], p[2], p[4], p[5]
  local tolerance = capacity * interval
  local free = math.min(p[3], capacity) * interval
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
    remaining = math.min(capacity, (free - math.fmod(free, interval)) / interval)
  end
  return {allowed, remaining, retry, ceil_div(ahead_after, q), delay, ahead_after}
end

-- stored: a warming bucket's idleness after the call (nil for others); its key lives until it is cold again.
local function gcra_store(key, ahead, p, now, stored)
  local q, w = p[5], p[6]
  if ahead <= 0 and (not w or stored >= w) then
    kv_del(key)
    return
  end
  local ticks = math.fmod(ahead, q)
  local micros = now + (ahead - ticks) / q
  if w then
    local until_cold = micros - now + ceil_div(w - math.min(w, stored), q)
    if ticks ~= 0 then
      until_cold = until_cold + 1
    end
    kv_set(key, string.format('%.0f:%.0f:%.0f', micros, ticks, stored), ttl_millis(until_cold))
  elseif ticks == 0 then
    kv_set(key, string.format('%.0f', micros), ttl_millis(micros - now))
  else
    kv_set(key, string.format('%.0f:%.0f', micros, ticks), ttl_millis(micros + 1 - now))
  end
end

ALGORITHMS['gc'] = {
  evaluate = gcra_evaluate,
  commit = function(key, code, p, now, cost, outcome, token)
    gcra_store(key, outcome[6], p, now, outcome[7])
  end,
  record = function(key, code, p, now, cost, token)
    local tolerance = p[1] * p[2]
    local ahead, micros, ticks, stored = gcra_ahead(key, p, now)
    if not p[6] then
      gcra_store(key, math.min(ahead + cost * p[2], tolerance), p, now)
      return
    end
    -- Saturates at an empty bucket, unless the arrival time already lies beyond (cold permits).
    stored = gcra_stored(p, now, ahead, micros, ticks, stored)
    local spent = math.min(cost * p[2], stored)
    local charged = ahead + cost * p[2] + gcra_surcharge(p[6], stored, spent)
    gcra_store(key, math.max(ahead, math.min(charged, tolerance)), p, now, stored - spent)
  end,
  refund = function(key, code, p, now, cost, token, charged)
    -- Gives back the stable price; a warming bucket keeps the surcharge and its spent idleness (never over-admits).
    if kv_get(key) then
      local ahead, micros, ticks, stored = gcra_ahead(key, p, now)
      if p[6] then
        stored = gcra_stored(p, now, ahead, micros, ticks, stored)
      end
      gcra_store(key, math.max(0, ahead - cost * p[2]), p, now, stored)
    end
  end
}
