-- Decisions, one after the other, each over one or more limits and all or nothing
-- (io.github.limiter.backend.redis.ScriptCall encodes the arguments and decodes the reply). One call may carry the
-- decisions a JVM has in flight at once on a key, or on several keys: each is decided exactly as if it had come alone,
-- in order, at the same Redis time. The O(1) algorithms read a key once and write it once per call, however many
-- decisions the call holds (kv_get, kv_set, kv_flush). This driver is composed with the algorithm files the call needs.
--
-- KEYS: one key per rule.
-- ARGV[1]: '' to read the time from Redis (always, in production), or a time in microseconds (tests only).
-- ARGV[2]: the number of rules. A rule is a key with its limit: for rule r, on KEYS[r], the algorithm code, the
--          number of its parameters, then the parameters.
-- Then the decisions, to the end: the operation ('a' acquire, 'c' check, 'r' record, 'x' delete, or 'f<time>' refund
-- of an acquire decided at <time>, in microseconds as that acquire returned it), a token unique to the decision (the
-- sliding-log member), the number of its limits, then for each limit its rule and its cost.
-- Returns {now, then for each decision, for each of its limits: allowed (0/1), remaining, retry after, reset after,
-- delay}. A decision is allowed when all its limits are.

local now = script_now()

local rules = {}
local i = 3
for r = 1, tonumber(ARGV[2]) do
  local code = ARGV[i]
  local algorithm = ALGORITHMS[code]
  if not algorithm then
    return redis.error_reply('limiter: unknown algorithm code ' .. tostring(code))
  end
  local count = tonumber(ARGV[i + 1])
  local p = {}
  for j = 1, count do
    p[j] = tonumber(ARGV[i + 1 + j])
  end
  rules[r] = {key = KEYS[r], code = code, algorithm = algorithm, p = p}
  i = i + 2 + count
end

local reply = {now}

local function answer(o)
  local n = #reply
  reply[n + 1] = o[1] and 1 or 0
  reply[n + 2] = math.max(0, o[2])
  reply[n + 3] = o[3]
  reply[n + 4] = o[4]
  reply[n + 5] = o[5]
end

local function evaluate(l, cost)
  return l.algorithm.evaluate(l.key, l.code, l.p, now, cost)
end

local DONE = {true, 0, 0, 0, 0}

local function decide(op, token, limits, costs)
  local kind = string.sub(op, 1, 1)
  if kind == 'x' then
    for _, l in ipairs(limits) do
      kv_del(l.key)
      redis.call('DEL', l.key)
      answer(DONE)
    end
    return
  end
  if kind == 'f' then
    local charged = tonumber(string.sub(op, 2))
    for j, l in ipairs(limits) do
      l.algorithm.refund(l.key, l.code, l.p, now, costs[j], token, charged)
      answer(DONE)
    end
    return
  end
  if kind == 'r' then
    for j, l in ipairs(limits) do
      local before = evaluate(l, costs[j])
      l.algorithm.record(l.key, l.code, l.p, now, costs[j], token)
      local state = evaluate(l, 0)
      local again = evaluate(l, costs[j])
      local retry = again[3]
      if again[1] then
        retry = 0
      end
      answer({before[1], state[2], retry, state[4], 0})
    end
    return
  end
  local outcomes = {}
  local all = true
  for j, l in ipairs(limits) do
    outcomes[j] = evaluate(l, costs[j])
    all = all and outcomes[j][1]
  end
  if kind == 'a' then
    for j, l in ipairs(limits) do
      if all then
        l.algorithm.commit(l.key, l.code, l.p, now, costs[j], outcomes[j], token)
      elseif outcomes[j][1] then
        -- All or nothing: this limit had room but consumes nothing; report it untouched.
        outcomes[j] = evaluate(l, 0)
      end
    end
  end
  for j = 1, #outcomes do
    answer(outcomes[j])
  end
end

while i <= #ARGV do
  local op, token, count = ARGV[i], ARGV[i + 1], tonumber(ARGV[i + 2])
  i = i + 3
  local limits, costs = {}, {}
  for j = 1, count do
    limits[j] = rules[tonumber(ARGV[i])]
    if not limits[j] then
      return redis.error_reply('limiter: no rule ' .. tostring(ARGV[i]))
    end
    costs[j] = tonumber(ARGV[i + 1])
    i = i + 2
  end
  decide(op, token, limits, costs)
end

kv_flush()
return reply
