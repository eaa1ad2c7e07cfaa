-- Several decisions on one key, one after the other, in one call (io.github.limiter.backend.redis.KeyLanes): the
-- decisions a JVM has in flight at once for a hot key are sent together, and each is decided exactly as if it had
-- come alone, in arrival order, at the same Redis time. The O(1) algorithms read their key once and write it once
-- per call, however many decisions it holds. This driver is composed with the one algorithm file it needs.
--
-- KEYS[1]: the key.
-- ARGV[1]: '' to read the time from Redis (always, in production), or a time in microseconds (tests only).
-- ARGV[2..7]: the limit: algorithm code, then five algorithm parameters.
-- ARGV[8...]: two per decision: the operation and cost ('a3': acquire 3, 'c1': check 1), and the sliding-log token.
-- Returns {now, then five per decision: allowed (0/1), remaining, retry after, reset after, delay}.

local now = script_now()

local key = KEYS[1]
local code = ARGV[2]
local algorithm = ALGORITHMS[code]
if not algorithm then
  return redis.error_reply('limiter: unknown algorithm code ' .. tostring(code))
end
local p = {tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6]), tonumber(ARGV[7])}

local reply = {now}
for i = 8, #ARGV, 2 do
  local op = string.sub(ARGV[i], 1, 1)
  local cost = tonumber(string.sub(ARGV[i], 2))
  local o = algorithm.evaluate(key, code, p, now, cost)
  if o[1] and op == 'a' then
    algorithm.commit(key, code, p, now, cost, o, ARGV[i + 1])
  end
  local n = #reply
  reply[n + 1] = o[1] and 1 or 0
  reply[n + 2] = math.max(0, o[2])
  reply[n + 3] = o[3]
  reply[n + 4] = o[4]
  reply[n + 5] = o[5]
end
kv_flush()
return reply
