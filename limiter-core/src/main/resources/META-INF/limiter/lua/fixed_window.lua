-- Fixed window counter (io.github.limiter.algorithm.FixedWindow).
-- State: one string "<window> <count>", expiring at the end of its window, where <window> is the window's number
-- (its start divided by its length: a short number, so the string stays small) for 'fw', its start for 'fc'.
-- Parameters 'fw': {limit, window}; 'fc': {limit, b0, b1, b2, b3}, the starts of the previous, current and next
-- calendar periods and the end of the next, as seen by the client; the Redis time picks the period.

local function fixed_bounds(code, p, now)
  if code == 'fw' then
    local start = math.floor(now / p[2]) * p[2]
    return start, start + p[2]
  end
  for i = 2, 4 do
    if now >= p[i] and now < p[i + 1] then
      return p[i], p[i + 1]
    end
  end
  error('limiter: the Redis time ' .. fmt_int(now) ..
      ' is outside the calendar periods described by the client; its clock is off by more than one period')
end

-- The stored window of a start, and back.
local function fixed_id(code, p, start)
  if code == 'fw' then
    return start / p[2]
  end
  return start
end

local function fixed_read(key, code, p)
  local v = kv_get(key)
  if not v then
    return nil
  end
  local s, c = string.match(v, '^(-?%d+) (%d+)$')
  s = tonumber(s)
  if code == 'fw' then
    s = s * p[2]
  end
  return {s, tonumber(c)}
end

local function fixed_evaluate(key, code, p, now, cost)
  local start, stop = fixed_bounds(code, p, now)
  local state = fixed_read(key, code, p)
  local count = 0
  if state and state[1] == start then
    count = state[2]
  end
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
  return {allowed, p[1] - after, retry, reset, 0, {start, after, stop}}
end

local function fixed_store(key, code, p, state, now)
  kv_set(key, fmt_int(fixed_id(code, p, state[1])) .. ' ' .. fmt_int(state[2]), ttl_millis(state[3] - now))
end

ALGORITHMS['fw'] = {
  evaluate = fixed_evaluate,
  commit = function(key, code, p, now, cost, outcome, token)
    fixed_store(key, code, p, outcome[6], now)
  end,
  record = function(key, code, p, now, cost, token)
    local start, stop = fixed_bounds(code, p, now)
    local state = fixed_read(key, code, p)
    local count = 0
    if state and state[1] == start then
      count = state[2]
    end
    fixed_store(key, code, p, {start, math.min(p[1], count + cost), stop}, now)
  end,
  refund = function(key, code, p, now, cost, token, charged)
    -- Only the window that was charged: if it has ended, the permits left with it.
    local start = fixed_bounds(code, p, charged)
    local state = fixed_read(key, code, p)
    if state and state[1] == start then
      kv_set(key, fmt_int(fixed_id(code, p, state[1])) .. ' ' .. fmt_int(math.max(0, state[2] - cost)))
    end
  end
}
ALGORITHMS['fc'] = ALGORITHMS['fw']
