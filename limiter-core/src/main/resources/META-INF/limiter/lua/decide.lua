-- Decisions, one after the other, each over one or more limits and all or nothing
-- (io.github.limiter.backend.redis.ScriptCall encodes the arguments and decodes the reply). One call may carry the
-- decisions a JVM has in flight at once on a key, or on several keys: each is decided exactly as if it had come alone,
-- in order, at the same Redis time. The O(1) algorithms read a key once and write it once per call, however many
-- decisions the call holds (kv_get, kv_set, kv_flush). This driver is composed with the algorithm files the call needs.
--
-- KEYS: the key of each limit of each decision, in order (a key may come several times).
-- ARGV[1]: '' to read the time from Redis (always, in production), or a time in microseconds (tests only).
-- ARGV[2...]: the limits the decisions use, each sent once: its algorithm code, the number of its parameters, then
--             its parameters (numbers, as the algorithm's file documents them).
-- Then, from the first argument after a limit that is not an algorithm code, the decisions, to the end: the
-- operation ('a' acquire, 'c' check, 'r' record, 'x' delete, 'n' the limits of one cluster slot in an acquire that a
-- limit on another slot rejected, or 'f<time>' refund of an acquire decided at <time>, in microseconds as that
-- acquire returned it, which answers each limit as it is once the permits are back), a token unique to the decision
-- (the sliding-log member), the number of its limits, then for each its limit (1-based, as above) and its cost.
-- Returns {now, then for each decision, for each of its limits: allowed (0/1), remaining, retry after, reset after,
-- delay}. A decision is allowed when all its limits are.
--
-- Each algorithm (ALGORITHMS[code]) answers evaluate(key, code, parameters, now, cost) with the outcome as values:
-- allowed, remaining, retry after, reset after, delay, then up to three values of its own that commit(key, code,
-- parameters, now, cost, token, ...) takes to write the new state; record and refund write without deciding.
--
-- This runs on every decision, so the common one (a single limit, acquire or check) takes a road that makes no table
-- and converts no number it can compare as text: outcomes are values, not tables, which a batch of 8 decisions
-- measured 5% faster.

local now = script_now()
-- The call's arguments as locals of this chunk: a global is looked up by name on every use.
local KEYS, ARGV = KEYS, ARGV

-- The limits, by number: {code, algorithm, parameters}.
local limits = {}
local i = 2
local known = ALGORITHMS[ARGV[2]]
while known do
  -- Created at its full size (growing a Lua table allocates it again): every algorithm has at least two parameters,
  -- none more than six.
  local count = ARGV[i + 1] + 0
  local p = {ARGV[i + 2] + 0, ARGV[i + 3] + 0, count > 2 and ARGV[i + 4] + 0 or nil,
             count > 3 and ARGV[i + 5] + 0 or nil, count > 4 and ARGV[i + 6] + 0 or nil,
             count > 5 and ARGV[i + 7] + 0 or nil}
  limits[#limits + 1] = {ARGV[i], known, p}
  i = i + 2 + count
  known = ALGORITHMS[ARGV[i]]
end

local function limit(ref)
  local l = limits[(ref == '1') and 1 or tonumber(ref)]
  if not l then
    error('limiter: no limit ' .. tostring(ref))
  end
  return l
end

local function cost(text)
  if text == '1' then
    return 1
  end
  return text + 0
end

-- Sized for one decision on one limit, the common call.
local reply = {now, 0, 0, 0, 0, 0}
local n = 1
local k = 0
local last = #ARGV

local function answer(allowed, remaining, retry, reset, delay)
  reply[n + 1] = allowed and 1 or 0
  reply[n + 2] = math.max(0, remaining)
  reply[n + 3] = retry
  reply[n + 4] = reset
  reply[n + 5] = delay
  n = n + 5
end

while i <= last do
  local op, token, count = ARGV[i], ARGV[i + 1], ARGV[i + 2]
  if count == '1' and (op == 'a' or op == 'c') then
    -- (limit, cost and answer written out: a Lua function call costs more than what these do)
    local ref, c = ARGV[i + 3], ARGV[i + 4]
    local l = (ref == '1') and limits[1] or limit(ref)
    if c == '1' then
      c = 1
    else
      c = c + 0
    end
    local key, code, algorithm, p = KEYS[k + 1], l[1], l[2], l[3]
    local allowed, remaining, retry, reset, delay, s1, s2, s3 = algorithm.evaluate(key, code, p, now, c)
    if allowed and op == 'a' then
      algorithm.commit(key, code, p, now, c, token, s1, s2, s3)
    end
    reply[n + 1] = allowed and 1 or 0
    reply[n + 2] = (remaining > 0) and remaining or 0
    reply[n + 3] = retry
    reply[n + 4] = reset
    reply[n + 5] = delay
    n = n + 5
    k = k + 1
    i = i + 5
  else
    count = tonumber(count)
    local kind = string.sub(op, 1, 1)
    local keys, used, costs, outcomes = {}, {}, {}, {}
    for j = 1, count do
      keys[j], used[j], costs[j] = KEYS[k + j], limit(ARGV[i + 1 + 2 * j]), cost(ARGV[i + 2 + 2 * j])
    end
    k = k + count
    i = i + 3 + 2 * count
    if kind == 'a' or kind == 'c' or kind == 'n' then
      -- 'n': the part, on this cluster slot, of an acquire that a limit on another slot rejected. It consumes nothing
      -- and answers what a rejected acquire answers.
      local all = kind ~= 'n'
      for j = 1, count do
        local l = used[j]
        outcomes[j] = {l[2].evaluate(keys[j], l[1], l[3], now, costs[j])}
        all = all and outcomes[j][1]
      end
      if kind ~= 'c' then
        for j = 1, count do
          local l = used[j]
          local o = outcomes[j]
          if all then
            l[2].commit(keys[j], l[1], l[3], now, costs[j], token, o[6], o[7], o[8])
          elseif o[1] then
            -- All or nothing: this limit had room but consumes nothing; report it untouched.
            outcomes[j] = {l[2].evaluate(keys[j], l[1], l[3], now, 0)}
          end
        end
      end
    elseif kind == 'r' then
      for j = 1, count do
        local key, code, algorithm, p, c = keys[j], used[j][1], used[j][2], used[j][3], costs[j]
        local within = algorithm.evaluate(key, code, p, now, c)
        algorithm.record(key, code, p, now, c, token)
        local _, remaining, _, reset = algorithm.evaluate(key, code, p, now, 0)
        local again, _, retry = algorithm.evaluate(key, code, p, now, c)
        if again then
          retry = 0
        end
        outcomes[j] = {within, remaining, retry, reset, 0}
      end
    elseif kind == 'x' or kind == 'f' then
      local charged = tonumber(string.sub(op, 2))
      for j = 1, count do
        if kind == 'x' then
          kv_del(keys[j])
          redis.call('DEL', keys[j])
          outcomes[j] = {true, 0, 0, 0, 0}
        else
          local l = used[j]
          l[2].refund(keys[j], l[1], l[3], now, costs[j], token, charged)
          -- What the limit answers now that the permits are back, consuming nothing: as an acquire rejected by
          -- another limit answers for this one.
          outcomes[j] = {l[2].evaluate(keys[j], l[1], l[3], now, 0)}
        end
      end
    else
      return redis.error_reply('limiter: unknown operation ' .. tostring(op))
    end
    for j = 1, count do
      local o = outcomes[j]
      answer(o[1], o[2], o[3], o[4], o[5])
    end
  end
end

kv_flush()
return reply
