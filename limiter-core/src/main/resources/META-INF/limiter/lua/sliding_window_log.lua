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

local function log_evaluate(key, code, p, now, cost)
  local limit, window = p[1], p[2]
  local horizon = '(' .. fmt_int(now - window)
  local count = redis.call('ZCOUNT', key, horizon, '+inf')
  local allowed = count + cost <= limit
  local function newest_reset()
    local newest = redis.call('ZRANGE', key, -1, -1, 'WITHSCORES')
    return tonumber(newest[2]) + window - now
  end
  if allowed then
    local reset = 0
    if cost > 0 then
      reset = window
    elseif count > 0 then
      reset = newest_reset()
    end
    return {true, limit - count - cost, 0, reset, 0}
  end
  -- The call fits once the (count + cost - limit) oldest permits have left the window.
  local oldest = redis.call('ZRANGEBYSCORE', key, horizon, '+inf', 'WITHSCORES', 'LIMIT', count + cost - limit - 1, 1)
  return {false, limit - count, tonumber(oldest[2]) + window - now, newest_reset(), 0}
end

local function log_add(key, window, now, cost, token)
  redis.call('ZREMRANGEBYSCORE', key, '-inf', fmt_int(now - window))
  local args = {}
  for i, member in ipairs(log_members(token, cost)) do
    args[2 * i - 1] = fmt_int(now)
    args[2 * i] = member
  end
  redis.call('ZADD', key, unpack(args))
  redis.call('PEXPIRE', key, ttl_millis(window))
end

ALGORITHMS['sl'] = {
  evaluate = log_evaluate,
  commit = function(key, code, p, now, cost, outcome, token)
    log_add(key, p[2], now, cost, token)
  end,
  record = function(key, code, p, now, cost, token)
    log_add(key, p[2], now, cost, token)
    redis.call('ZREMRANGEBYRANK', key, 0, -(p[1] + 1))
  end,
  refund = function(key, code, p, now, cost, token)
    redis.call('ZREM', key, unpack(log_members(token, cost)))
  end
}
