-- Warm-up of a token bucket, after Guava's SmoothWarmingUp (io.github.limiter.algorithm.Gcra): composed after
-- gcra.lua, whose functions it uses, into the scripts of calls that have a warming bucket; it defines the functions
-- gcra.lua declares for them. Parameter 6 of 'gc' is the warm-up period w, in ticks. The surcharge and the price of a
-- permit are doubles, computed with the same operations in the same order as the Java class, so they agree to the
-- bit.

-- Stored idleness now, in ticks up to the warm-up period w: a new key is cold; idle time
-- accrues while the arrival time lies in the past.
-- The state keeps it in whole microseconds, so that a bucket retuned to another q reads it as the same time.
local function gcra_stored(p, now, ahead, micros, ticks, stored)
  local w, q = p[6], p[5]
  if not micros then
    return w
  end
  stored = math.min(stored, w / q) * q
  if ahead > 0 or micros >= now then
    return stored
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
gcra_warm_evaluate = function(key, p, now, cost)
  local interval, q, tolerance = p[2], p[5], p[1] * p[2]
  local ahead, micros, ticks, stored = gcra_ahead(key, p, now)
  stored = gcra_stored(p, now, ahead, micros, ticks, stored)
  local wait = ahead + cost * interval
  if wait > tolerance then
    return false, gcra_warm_remaining(p, ahead, stored), math.max(1, ceil_div(wait - tolerance, q)),
        ceil_div(ahead, q), 0, ahead, stored
  end
  local spent = math.min(cost * interval, stored)
  local ahead_after = wait + gcra_surcharge(p[6], stored, spent)
  stored = stored - spent
  return true, gcra_warm_remaining(p, ahead_after, stored), 0, ceil_div(ahead_after, q), 0, ahead_after, stored
end

-- stored: the idleness after the call; the key lives until the bucket is full and cold again.
gcra_warm_store = function(key, ahead, p, now, stored)
  local q, w = p[5], p[6]
  local stored_micros = (stored - math.fmod(stored, q)) / q
  if ahead <= 0 and stored_micros * q >= w then
    kv_set(key, false)
    return
  end
  local ticks = math.fmod(ahead, q)
  local micros = now + (ahead - ticks) / q
  local until_cold = micros - now + ceil_div(w - math.min(w, stored_micros * q), q)
  if ticks ~= 0 then
    until_cold = until_cold + 1
  end
  kv_set(key, string.format('%d:%d:%d', micros, ticks, stored_micros), ttl_millis(until_cold))
end

if general then
  -- Saturates at an empty bucket, unless the arrival time already lies beyond it (cold permits).
  gcra_warm_record = function(key, p, now, cost)
    local ahead, micros, ticks, stored = gcra_ahead(key, p, now)
    stored = gcra_stored(p, now, ahead, micros, ticks, stored)
    local spent = math.min(cost * p[2], stored)
    local charged = ahead + cost * p[2] + gcra_surcharge(p[6], stored, spent)
    gcra_warm_store(key, math.max(ahead, math.min(charged, p[1] * p[2])), p, now, stored - spent)
  end

  -- Gives back ticks of the stable price (gcra_refunded) and keeps the surcharge and the idleness spent: a refund never
  -- over-admits.
  gcra_warm_refund = function(key, p, now, given)
    if kv_get(key) then
      local ahead, micros, ticks, stored = gcra_ahead(key, p, now)
      stored = gcra_stored(p, now, ahead, micros, ticks, stored)
      gcra_warm_store(key, math.max(0, ahead - given), p, now, stored)
    end
  end
end
