-- One decision over one or more limits, all or nothing (io.github.limiter.backend.redis.RedisScriptBackend).
-- The algorithm files are prepended to this driver; together they are loaded once and run with EVALSHA.
--
-- KEYS: one key per limit.
-- ARGV[1]: '' to read the time from Redis (always, in production), or a time in microseconds (tests only).
-- ARGV[2]: the operation: 'a' acquire, 'c' check, 'r' record, 'x' delete, or 'f<time>' refund of an acquire
--          decided at <time> (microseconds, as returned by that acquire).
-- ARGV[3]: a token unique to this call, stored as the sliding-log member.
-- ARGV[4...]: seven per limit: algorithm code, cost, then five algorithm parameters.
-- Returns {now, all allowed (0/1), then five per limit: allowed (0/1), remaining, retry after, reset after, delay}.

local now = script_now()
local op = ARGV[2]
local token = ARGV[3]

if op == 'x' then
  redis.call('DEL', unpack(KEYS))
  return {now, 1}
end

local limits = {}
for i = 1, #KEYS do
  local base = 3 + (i - 1) * 7
  local code = ARGV[base + 1]
  local algorithm = ALGORITHMS[code]
  if not algorithm then
    return redis.error_reply('limiter: unknown algorithm code ' .. tostring(code))
  end
  limits[i] = {key = KEYS[i], code = code, algorithm = algorithm, cost = tonumber(ARGV[base + 2]),
    p = {tonumber(ARGV[base + 3]), tonumber(ARGV[base + 4]), tonumber(ARGV[base + 5]),
         tonumber(ARGV[base + 6]), tonumber(ARGV[base + 7])}}
end

local function evaluate(l, cost)
  return l.algorithm.evaluate(l.key, l.code, l.p, now, cost)
end

local outcomes = {}
local all = true

if string.sub(op, 1, 1) == 'f' then
  local charged = tonumber(string.sub(op, 2))
  for _, l in ipairs(limits) do
    l.algorithm.refund(l.key, l.code, l.p, now, l.cost, token, charged)
  end
  return {now, 1}
end

if op == 'r' then
  for i, l in ipairs(limits) do
    local before = evaluate(l, l.cost)
    l.algorithm.record(l.key, l.code, l.p, now, l.cost, token)
    local state = evaluate(l, 0)
    local again = evaluate(l, l.cost)
    local retry = again[3]
    if again[1] then
      retry = 0
    end
    outcomes[i] = {before[1], state[2], retry, state[4], 0}
    all = all and before[1]
  end
else
  for i, l in ipairs(limits) do
    outcomes[i] = evaluate(l, l.cost)
    all = all and outcomes[i][1]
  end
  if op == 'a' then
    for i, l in ipairs(limits) do
      if all then
        l.algorithm.commit(l.key, l.code, l.p, now, l.cost, outcomes[i], token)
      elseif outcomes[i][1] then
        -- All or nothing: this limit had room but consumes nothing; report it untouched.
        outcomes[i] = evaluate(l, 0)
      end
    end
  end
end

kv_flush()

local reply = {now, all and 1 or 0}
for i, o in ipairs(outcomes) do
  local base = 2 + (i - 1) * 5
  reply[base + 1] = o[1] and 1 or 0
  reply[base + 2] = math.max(0, o[2])
  reply[base + 3] = o[3]
  reply[base + 4] = o[4]
  reply[base + 5] = o[5]
end
return reply
