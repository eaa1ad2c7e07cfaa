-- Sliding window log (io.github.limiter.algorithm.SlidingWindowLog).
-- State: a sorted set, one member per admitted permit, scored by its time; the window is (now - window, now].
-- Members are the caller's unique token (":<i>" appended for a cost above one), so two calls never share a member.
-- Parameters 'sl': {limit, window}.

-- Time until the newest permit leaves the window: the newest stored, or one admitted by this call (at now).
local function log_newest_reset(key, window, now, waiting)
  local newest = redis.call('ZRANGE', key, -1, -1, 'WITHSCORES')
  local stored = newest[2] and tonumber(newest[2]) + window - now
  if waiting == 0 then
    return stored
  end
  if stored and stored > window then
    return stored
  end
  return window
end

local function log_evaluate(key, code, p, now, cost)
  local limit, window = p[1], p[2]
  local horizon = '(' .. string.format('%d', now - window)
  local pending = log_pending[key]
  local waiting = pending and pending[2] or 0
  local count = redis.call('ZCOUNT', key, horizon, '+inf') + waiting
  local allowed = count + cost <= limit
  if allowed then
    local reset = 0
    if cost > 0 then
      reset = window
    elseif count > 0 then
      reset = log_newest_reset(key, window, now, waiting)
    end
    return true, limit - count - cost, 0, reset, 0
  end
  -- The call fits once the (count + cost - limit) oldest permits have left the window: the permit of that rank (from
  -- 0) as the sorted set will hold it once this call's members are written at now, after the stored ones up to now
  -- and before any stored later (a clock that went back).
  local rank = count + cost - limit - 1
  local oldest = now
  local before = waiting > 0 and redis.call('ZCOUNT', key, horizon, string.format('%d', now)) or rank + 1
  if rank < before or rank >= before + waiting then
    if rank >= before then
      rank = rank - waiting
    end
    oldest = tonumber(redis.call('ZRANGEBYSCORE', key, horizon, '+inf', 'WITHSCORES', 'LIMIT', rank, 1)[2])
  end
  return false, limit - count, oldest + window - now, log_newest_reset(key, window, now, waiting), 0
end

-- At most this many members per command: Lua's unpack cannot spread more than a few thousand values.
local LOG_CHUNK = 500

-- Drops the permits that left the window and adds the members of an entry of log_pending (common.lua) at now:
-- {window, permits, shortest window, member, member...}. As the calls would one after the other: the shortest window
-- of the call's decisions on the key drops the most, and the last one's sets the time to live (a retune in flight).
-- A delete earlier in the call (kv_set(key, false)) is over once members are written.
local function log_write(key, pending, now)
  redis.call('ZREMRANGEBYSCORE', key, '-inf', string.format('%d', now - pending[3]))
  local score = string.format('%d', now)
  for first = 4, #pending, LOG_CHUNK do
    local args = {}
    for i = first, math.min(first + LOG_CHUNK - 1, #pending) do
      args[#args + 1] = score
      args[#args + 1] = pending[i]
    end
    redis.call('ZADD', key, unpack(args))
  end
  redis.call('PEXPIRE', key, ttl_millis(pending[1]))
  kv_writes[key] = nil
end

-- Adds a call's members to an entry: its token, with ":<i>" appended for a cost above one.
local function log_members(pending, token, cost)
  pending[2] = pending[2] + cost
  if cost == 1 then
    pending[#pending + 1] = token
    return pending
  end
  for i = 1, cost do
    pending[#pending + 1] = token .. ':' .. i
  end
  return pending
end

log_pending = {}
log_finish = function(now)
  for key, pending in pairs(log_pending) do
    log_write(key, pending, now)
  end
end

ALGORITHMS['sl'] = {
  evaluate = log_evaluate,
  commit = function(key, code, p, now, cost, token)
    local pending = log_pending[key]
    if not pending then
      pending = {p[2], 0, p[2]}
      log_pending[key] = pending
    else
      pending[1] = p[2]
      if p[2] < pending[3] then
        pending[3] = p[2]
      end
    end
    log_members(pending, token, cost)
  end
}

if general then
  -- Writes at once what this call admitted on a key, before a record or a refund on it.
  local function log_flush(key, now)
    local pending = log_pending[key]
    if pending then
      log_pending[key] = nil
      log_write(key, pending, now)
    end
  end

  local function log_remove(key, pending)
    for first = 4, #pending, LOG_CHUNK do
      redis.call('ZREM', key, unpack(pending, first, math.min(first + LOG_CHUNK - 1, #pending)))
    end
  end

  ALGORITHMS['sl'].record = function(key, code, p, now, cost, token)
    -- Saturating at the limit drops the lowest ranks: the oldest entries and, among entries of one time, the members
    -- that sort first. Recorded members sort last ('~'), so that the entries dropped are admitted calls' own, which a
    -- refund would otherwise free again: a refund must never leave more room than if its call had not come. (A record
    -- writes at once, after what the call admitted before it: its answer reads the log it leaves.)
    log_flush(key, now)
    log_write(key, log_members({p[2], 0, p[2]}, '~' .. token, cost), now)
    redis.call('ZREMRANGEBYRANK', key, 0, -(p[1] + 1))
  end

  ALGORITHMS['sl'].refund = function(key, code, p, now, cost, token, charged)
    log_flush(key, now)
    log_remove(key, log_members({p[2], 0, p[2]}, token, cost))
  end
end
