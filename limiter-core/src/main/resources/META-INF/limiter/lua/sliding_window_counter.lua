-- Sliding window counter (io.github.limiter.algorithm.SlidingWindowCounter).
-- State: the current window, its count and the previous window's count (pack_counts, common.lua), kept for two
-- windows, where the window is its number (its start divided by its length: a short number, so the value stays small).
-- Parameters 'sc': {limit, window}. Same arithmetic, in the same order, as the Java class.

-- The time to decide at, the start of its window, and the counts as seen from that window (a stored window may be
-- this one or the last). A clock that went back behind the stored window decides as at that window's start (its
-- previous window then weighs in full): a window started afresh over the newer one's count would admit twice. A
-- stored window further ahead than a clock goes back (CLOCK_BACK, common.lua, or a window when longer) was written
-- under another length, whose number reads as another start here: the key starts afresh.
local function counter_read(key, window, now)
  local v = kv_get(key)
  local s, c, pr
  if v then
    s, c, pr = unpack_counts(v, 2)
    s = s * window
    if now < s then
      if s - now <= math.max(window, CLOCK_BACK) then
        now = s
      else
        s = nil
      end
    end
  end
  local start = math.floor(now / window) * window
  if s == start then
    return now, start, c + 0, pr + 0
  elseif s == start - window then
    return now, start, 0, c + 0
  end
  return now, start, 0, 0
end

local function counter_store(key, window, now, start, current, previous)
  kv_set(key, pack_counts(start / window, current, previous), ttl_millis(start + 2 * window - now))
end

local function counter_evaluate(key, code, p, now, cost)
  local limit, window = p[1], p[2]
  local start, current, previous
  now, start, current, previous = counter_read(key, window, now)
  local elapsed = now - start
  local weighted = previous * (window - elapsed) / window
  local allowed = weighted + current + cost <= limit
  local after = current
  if allowed then
    after = current + cost
  end
  local remaining = math.floor(limit - weighted - after)
  local retry = 0
  if not allowed and cost > limit then
    -- Never fits; a retry of a call that does can come once this window's count has faded (as in Java: without this,
    -- a fresh window's count of 0 would make the time below infinite).
    retry = start + 2 * window - now
  elseif not allowed then
    if current + cost > limit then
      local fade = math.ceil(window - window * (limit - cost) / current)
      retry = start + window - now + math.max(0, fade)
    else
      local fade = math.ceil(window - window * (limit - cost - current) / previous)
      retry = math.max(1, fade - elapsed)
    end
  end
  local reset = 0
  if after > 0 then
    reset = start + 2 * window - now
  elseif previous > 0 then
    reset = start + window - now
  end
  return allowed, remaining, retry, reset, 0, start, after, previous
end

ALGORITHMS['sc'] = {
  evaluate = counter_evaluate,
  commit = function(key, code, p, now, cost, token, start, after, previous)
    counter_store(key, p[2], now, start, after, previous)
  end
}

if general then
  ALGORITHMS['sc'].record = function(key, code, p, now, cost, token)
    local window = p[2]
    local at, start, current, previous = counter_read(key, window, now)
    counter_store(key, window, at, start, math.min(p[1], current + cost), previous)
  end

  ALGORITHMS['sc'].refund = function(key, code, p, now, cost, token, charged)
    -- Give back to the window that was charged, whether it is still the current one or now the previous one.
    local window = p[2]
    local start = math.floor(charged / window) * window
    local v = kv_get(key)
    if v then
      local s, c, pr = unpack_counts(v, 2)
      s, c, pr = s * window, c + 0, pr + 0
      if s == start then
        c = math.max(0, c - cost)
      elseif s == start + window then
        pr = math.max(0, pr - cost)
      else
        return
      end
      kv_set(key, pack_counts(s / window, c, pr))
    end
  end
end
