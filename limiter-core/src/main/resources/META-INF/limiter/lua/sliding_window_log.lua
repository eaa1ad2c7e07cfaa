-- Sliding window log (io.github.limiter.algorithm.SlidingWindowLog).
-- State: a sorted set, one member per admitted permit, scored by its time; the window is (now - window, now].
-- Members are the caller's unique token (":<i>" appended for a cost above one), so two calls never share a member.
-- Parameters 'sl': {limit, window}.

local function log_members(token, cost)
  if cost == 1 then
    return {token}
  end
  local members = {}
  for i = 1, cost do
    members[i] = token .. ':' .. i
  end
  return members
end

-- Time until the newest permit leaves the window.
local function log_newest_reset(key, window, now)
  local newest = redis.call('ZRANGE', key, -1, -1, 'WITHSCORES')
  return tonumber(newest[2]) + window - now
end

local function log_evaluate(key, code, p, now, cost)
  local limit, window = p[1], p[2]
  local horizon = '(' .. string.format('%d', now - window)
  local count = redis.call('ZCOUNT', key, horizon, '+inf')
  local allowed = count + cost <= limit
  if allowed then
    local reset = 0
    if cost > 0 then
      reset = window
    elseif count > 0 then
      reset = log_newest_reset(key, window, now)
    end
    return true, limit - count - cost, 0, reset, 0
  end
  -- The call fits once the (count + cost - limit) oldest permits have left the window.
  local oldest = redis.call('ZRANGEBYSCORE', key, horizon, '+inf', 'WITHSCORES', 'LIMIT', count + cost - limit - 1, 1)
  return false, limit - count, tonumber(oldest[2]) + window - now, log_newest_reset(key, window, now), 0
end

-- At most this many members per command: Lua's unpack cannot spread more than a few thousand values.
local LOG_CHUNK = 500

local function log_add(key, window, now, cost, token)
  redis.call('ZREMRANGEBYSCORE', key, '-inf', string.format('%d', now - window))
  local members = log_members(token, cost)
  local score = string.format('%d', now)
  for first = 1, #members, LOG_CHUNK do
    local args = {}
    for i = first, math.min(first + LOG_CHUNK - 1, #members) do
      args[#args + 1] = score
      args[#args + 1] = members[i]
    end
    redis.call('ZADD', key, unpack(args))
  end
  redis.call('PEXPIRE', key, ttl_millis(window))
end

ALGORITHMS['sl'] = {
  evaluate = log_evaluate,
  commit = function(key, code, p, now, cost, token)
    log_add(key, p[2], now, cost, token)
  end
}

if general then
  local function log_remove(key, members)
    for first = 1, #members, LOG_CHUNK do
      redis.call('ZREM', key, unpack(members, first, math.min(first + LOG_CHUNK - 1, #members)))
    end
  end

  ALGORITHMS['sl'].record = function(key, code, p, now, cost, token)
    -- Saturating at the limit drops the lowest ranks: the oldest entries and, among entries of one time, the members
    -- that sort first. Recorded members sort last ('~'), so that the entries dropped are admitted calls' own, which a
    -- refund would otherwise free again: a refund must never leave more room than if its call had not come.
    log_add(key, p[2], now, cost, '~' .. token)
    redis.call('ZREMRANGEBYRANK', key, 0, -(p[1] + 1))
  end

  ALGORITHMS['sl'].refund = function(key, code, p, now, cost, token, charged)
    log_remove(key, log_members(token, cost))
  end
end
