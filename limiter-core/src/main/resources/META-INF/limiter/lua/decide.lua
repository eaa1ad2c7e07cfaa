-- Decisions, one after the other, each over one or more limits and all or nothing
-- (io.github.limiter.backend.redis.ScriptCall encodes the arguments and decodes the reply). One call may carry the
-- decisions a JVM has in flight at once on a key, or on several keys: each is decided exactly as if it had come alone,
-- in order, at the same Redis time. The O(1) algorithms read a key once and write it once per call, however many
-- decisions the call holds (kv_get, kv_set, and the writes at the end). This driver is composed with the algorithm files the call needs.
--
-- KEYS: the key of each limit of each decision, in order (a key may come several times).
-- ARGV[1]: '' to read the time from Redis (always, in production), or a time in microseconds (tests only).
-- ARGV[2...]: the limits the decisions use, each sent once: its algorithm code, the number of its parameters, then
--             its parameters (numbers, as the algorithm's file documents them).
-- Then, from the first argument after a limit that is not an algorithm code, the decisions, to the end. The common
-- decision, an acquire or a check of one permit of one limit that needs no token, is two arguments: 'A' (acquire) or
-- 'C' (check), then its limit (1-based, as above). Any other decision is: the operation ('a' acquire, 'c' check, 'r'
-- record, 'x' delete, 'n' the limits of one cluster slot in an acquire that a limit on another slot rejected, or
-- 'f<time>' refund of an acquire decided at <time>, in microseconds as that acquire returned it, which answers each
-- limit as it is once the permits are back), a token unique to the decision (the sliding-log member), the number of
-- its limits, then for each its limit (1-based, as above) and its cost.
-- Returns one text of integers separated by spaces: now, then for each decision, for each of its limits: allowed
-- (0/1), remaining, retry after, reset after, delay. A decision is allowed when all its limits are. Text, not an array:
-- Redis 6 writes each array reply to the socket with a write of its own, where the replies of the calls pipelined on a
-- connection that are texts go out in one (docs/benchmarks.md, "The whole machine per decision": 18-30% less Redis CPU
-- per decision when calls do not share a batch). Each number is formatted as an integer ('%d'): Lua's own conversion
-- keeps 14 digits, and a time has 16.
--
-- Each algorithm (ALGORITHMS[code]) answers evaluate(key, code, parameters, now, cost) with the outcome as values:
-- allowed, remaining, retry after, reset after, delay, then up to three values of its own that commit(key, code,
-- parameters, now, cost, token, ...) takes to write the new state; record and refund write without deciding.
--
-- This runs on every decision, so the common one (a single limit, acquire or check) takes a road that makes no table
-- and converts no number it can compare as text: outcomes are values, not tables, which a batch of 8 decisions
-- measured 5% faster. Every function a script defines is created anew by every call, and costs Redis about 2,000
-- instructions with the garbage it leaves (scripts/script-cost.py): the driver defines none, and what only records,
-- refunds, deletes and decisions over several limits need is defined only when 'general' is true, which the script of
-- a call that has such a decision declares in its first line (io.github.limiter.backend.redis.LimiterScript).

-- The call's arguments as locals of this chunk: a global is looked up by name on every use.
local KEYS, ARGV = KEYS, ARGV

-- The limits, by number: their parameters, then the code (7) and the algorithm (8), in one table each.
local limits = {}
local i = 2
local known = ALGORITHMS[ARGV[2]]
while known do
  -- Created at its full size (growing a Lua table allocates it again): every algorithm has at least two parameters,
  -- none more than six.
  local count = ARGV[i + 1] + 0
  limits[#limits + 1] = {ARGV[i + 2] + 0, ARGV[i + 3] + 0, count > 2 and ARGV[i + 4] + 0 or nil,
                         count > 3 and ARGV[i + 5] + 0 or nil, count > 4 and ARGV[i + 6] + 0 or nil,
                         count > 5 and ARGV[i + 7] + 0 or nil, ARGV[i], known}
  i = i + 2 + count
  known = ALGORITHMS[ARGV[i]]
end

-- The reply's pieces: the time, then one per limit of each decision.
local reply = {string.format('%d', now)}
local n = 1
local k = 0
local last = #ARGV

while i <= last do
  local op = ARGV[i]
  -- The decision on one limit: its reference, cost, token and whether it acquires; ref stays nil for any other.
  local ref, c, token, acquire
  if op == 'A' or op == 'C' then
    ref, c, token, acquire = ARGV[i + 1], 1, '', op == 'A'
    i = i + 2
  elseif ARGV[i + 2] == '1' and (op == 'a' or op == 'c') then
    ref, c, token, acquire = ARGV[i + 3], ARGV[i + 4] + 0, ARGV[i + 1], op == 'a'
    i = i + 5
  end
  if ref then
    local l = (ref == '1') and limits[1] or limits[tonumber(ref)]
    if not l then
      return redis.error_reply('limiter: no limit ' .. tostring(ref))
    end
    local key, code, algorithm = KEYS[k + 1], l[7], l[8]
    local allowed, remaining, retry, reset, delay, s1, s2, s3 = algorithm.evaluate(key, code, l, now, c)
    if allowed and acquire then
      algorithm.commit(key, code, l, now, c, token, s1, s2, s3)
    end
    n = n + 1
    if allowed and retry == 0 and delay == 0 then
      -- An admission without a delay, the usual answer: two numbers to format instead of five (Redis spends about
      -- 1,000 instructions on each).
      reply[n] = string.format('1 %d 0 %d 0', (remaining > 0) and remaining or 0, reset)
    else
      reply[n] = string.format('%d %d %d %d %d', allowed and 1 or 0, (remaining > 0) and remaining or 0, retry, reset,
                               delay)
    end
    k = k + 1
  elseif not general then
    return redis.error_reply('limiter: operation ' .. tostring(op) .. ' sent to a script without general operations')
  else
    local token, count = ARGV[i + 1], tonumber(ARGV[i + 2])
    local kind = string.sub(op, 1, 1)
    local keys, used, costs, outcomes = {}, {}, {}, {}
    for j = 1, count do
      local ref = ARGV[i + 1 + 2 * j]
      local used_limit = limits[tonumber(ref)]
      if not used_limit then
        return redis.error_reply('limiter: no limit ' .. tostring(ref))
      end
      keys[j], used[j], costs[j] = KEYS[k + j], used_limit, ARGV[i + 2 + 2 * j] + 0
    end
    k = k + count
    i = i + 3 + 2 * count
    if kind == 'a' or kind == 'c' or kind == 'n' then
      -- 'n': the part, on this cluster slot, of an acquire that a limit on another slot rejected. It consumes nothing
      -- and answers what a rejected acquire answers.
      local all = kind ~= 'n'
      for j = 1, count do
        local u = used[j]
        outcomes[j] = {u[8].evaluate(keys[j], u[7], u, now, costs[j])}
        all = all and outcomes[j][1]
      end
      if kind ~= 'c' then
        for j = 1, count do
          local u = used[j]
          local o = outcomes[j]
          if all then
            u[8].commit(keys[j], u[7], u, now, costs[j], token, o[6], o[7], o[8])
          elseif o[1] then
            -- All or nothing: this limit had room but consumes nothing; report it untouched.
            outcomes[j] = {u[8].evaluate(keys[j], u[7], u, now, 0)}
          end
        end
      end
    elseif kind == 'r' then
      for j = 1, count do
        local key, u, c = keys[j], used[j], costs[j]
        local code, algorithm = u[7], u[8]
        local within = algorithm.evaluate(key, code, u, now, c)
        algorithm.record(key, code, u, now, c, token)
        local _, remaining, _, reset = algorithm.evaluate(key, code, u, now, 0)
        local again, _, retry = algorithm.evaluate(key, code, u, now, c)
        if again then
          retry = 0
        end
        outcomes[j] = {within, remaining, retry, reset, 0}
      end
    elseif kind == 'x' or kind == 'f' then
      local charged = tonumber(string.sub(op, 2))
      for j = 1, count do
        if kind == 'x' then
          kv_set(keys[j], false)
          if log_pending then
            log_pending[keys[j]] = nil
          end
          redis.call('DEL', keys[j])
          outcomes[j] = {true, 0, 0, 0, 0}
        else
          local u = used[j]
          u[8].refund(keys[j], u[7], u, now, costs[j], token, charged)
          -- What the limit answers now that the permits are back, consuming nothing: as an acquire rejected by
          -- another limit answers for this one.
          outcomes[j] = {u[8].evaluate(keys[j], u[7], u, now, 0)}
        end
      end
    else
      return redis.error_reply('limiter: unknown operation ' .. tostring(op))
    end
    for j = 1, count do
      local o = outcomes[j]
      n = n + 1
      reply[n] = string.format('%d %d %d %d %d', o[1] and 1 or 0, math.max(0, o[2]), o[3], o[4], o[5])
    end
  end
end

-- The writes, after every read: the sliding logs' members, then the keys of the O(1) algorithms, once each.
if log_finish then
  log_finish(now)
end
for key, ttl in pairs(kv_writes) do
  local value = kv_values[key]
  if value == false then
    redis.call('DEL', key)
  elseif ttl == true then
    redis.call('SET', key, value, 'KEEPTTL')
  else
    redis.call('SET', key, value, 'PX', ttl)
  end
end
return table.concat(reply, ' ')
