-- Fixed window counter (io.github.limiter.algorithm.FixedWindow).
-- State: the window and its count (pack_counts, common.lua), expiring at the end of its window, where the window is its
-- number (its start divided by its length: a short number, so the value stays small) for 'fw', its start for 'fc'.
-- Parameters 'fw': {limit, window}; 'fc': {limit, b0, b1, b2, b3}, the starts of the previous, current and next
-- calendar periods and the end of the next, as seen by the client; the Redis time picks the period.

-- The window containing a time (start, end), or nothing for a calendar time outside the periods the client described.
local function fixed_window_of(code, p, t)
  if code == 'fw' then
    local start = math.floor(t / p[2]) * p[2]
    return start, start + p[2]
  end
  for i = 2, 4 do
    if t >= p[i] and t < p[i + 1] then
      return p[i], p[i + 1]
    end
  end
end

local function fixed_bounds(code, p, now)
  local start, stop = fixed_window_of(code, p, now)
  if start then
    return start, stop
  end
  error('limiter: the Redis time ' .. string.format('%d', now) ..
      ' is outside the calendar periods described by the client; its clock is off by more than one period')
end

-- The stored window of a start, and back.
local function fixed_id(code, p, start)
  if code == 'fw' then
    return start / p[2]
  end
  return start
end

-- The stored window's start and count, or nothing.
local function fixed_read(key, code, p)
  local v = kv_get(key)
  if not v then
    return nil
  end
  local s, c = unpack_counts(v, 1)
  s = s + 0
  if code == 'fw' then
    s = s * p[2]
  end
  return s, c + 0
end

-- The window of now (start, end), the count it holds (the stored count if the key holds this window, else 0) and
-- the time to decide at: a clock that went back behind the stored window decides as at that window's start (an
-- older window started afresh over the newer one's count would admit its permits twice). A stored window further
-- ahead than a clock goes back (CLOCK_BACK, common.lua, or a window when longer), or that is not one of the calendar
-- periods the client describes, was written under another length or calendar, whose number reads as another start
-- here (one ahead by years for a window made twice as long): the key starts afresh.
local function fixed_current(key, code, p, now)
  local s, c = fixed_read(key, code, p)
  if s and now < s then
    if (code == 'fw' and s - now <= math.max(p[2], CLOCK_BACK))
        or (code ~= 'fw' and (s == p[2] or s == p[3] or s == p[4])) then
      now = s
    else
      s = nil
    end
  end
  local start, stop = fixed_bounds(code, p, now)
  if s == start then
    return start, stop, c, now
  end
  return start, stop, 0, now
end

local function fixed_evaluate(key, code, p, now, cost)
  local start, stop, count
  start, stop, count, now = fixed_current(key, code, p, now)
  local allowed = count + cost <= p[1]
  local after = count
  local retry = stop - now
  if allowed then
    after = count + cost
    retry = 0
  end
  local reset = stop - now
  if after == 0 then
    reset = 0
  end
  return allowed, p[1] - after, retry, reset, 0, start, after, stop
end

-- ttl: milliseconds, or nil to keep the key's time to live.
local function fixed_store(key, code, p, start, count, ttl)
  kv_set(key, pack_counts(fixed_id(code, p, start), count), ttl)
end

ALGORITHMS['fw'] = {
  evaluate = fixed_evaluate,
  commit = function(key, code, p, now, cost, token, start, after, stop)
    fixed_store(key, code, p, start, after, ttl_millis(stop - now))
  end
}
ALGORITHMS['fc'] = ALGORITHMS['fw']

if general then
  ALGORITHMS['fw'].record = function(key, code, p, now, cost, token)
    local start, stop, count = fixed_current(key, code, p, now)
    fixed_store(key, code, p, start, math.min(p[1], count + cost), ttl_millis(stop - now))
  end

  ALGORITHMS['fw'].refund = function(key, code, p, now, cost, token, charged)
    -- Only the window that was charged: if it has ended, the permits left with it (a calendar period the client no
    -- longer describes has ended).
    local start = fixed_window_of(code, p, charged)
    local s, c = fixed_read(key, code, p)
    if start and s == start then
      fixed_store(key, code, p, s, math.max(0, c - cost))
    end
  end
end
