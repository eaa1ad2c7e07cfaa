-- Helpers shared by the algorithm files; this file comes first in the composed script, so its locals are
-- visible to every algorithm (Redis forbids scripts to create globals).
local ALGORITHMS = {}

-- Integers are written as exact decimal text with string.format('%d', x) (tostring would print 1.7e15 with 14
-- significant digits), inline: every function a script defines costs each call its creation.

-- True only in tests that pass the time in ARGV[1]; production always reads the Redis TIME (time.lua; Lua turns
-- numeric text into a number in arithmetic, at half the cost of a call of tonumber).
local virtual_time = ARGV[1] ~= ''

-- How far back the Redis time may go (a failover to a replica whose clock is behind) and a window's stored state still
-- be taken for this limit's, in microseconds: an hour. A window stored further ahead was written under another length.
local CLOCK_BACK = 3600000000

-- A time-to-live in milliseconds for a duration in microseconds, rounded up, at least 1, as text: Redis would print a
-- number with '%.17g', which costs twice '%d'. Under a virtual time the real clock that expires keys is unrelated
-- to the script's time, so keys then live at least a minute.
local function ttl_millis(micros)
  local ttl = math.ceil(micros / 1000)
  if ttl < 1 then
    ttl = 1
  end
  if virtual_time then
    return string.format('%d', math.max(ttl, 60000))
  end
  return string.format('%d', ttl)
end

-- The string state of the O(1) algorithms goes through these: each key is read at most once per script call and
-- written at most once, at the end of decide.lua, however many decisions the call takes on it. A missing key reads
-- nil. Every write of a call comes after all its reads, so that a call that fails (a key of another type that some
-- other program wrote, a calendar window a client described wrongly) leaves nothing behind: Redis keeps what a
-- failing script wrote, and the callers of a failed call got no permit.
local kv_values = {}
local kv_writes = {}

local function kv_get(key)
  local v = kv_values[key]
  if v == nil then
    v = redis.call('GET', key)
    kv_values[key] = v
  end
  if v == false then
    return nil
  end
  return v
end

-- value: the key's new value, or false to delete it. ttl: milliseconds the key lives after this call (text, from
-- ttl_millis), or nil to keep the time to live it has (or was given earlier in this call: a key created by this call
-- must not be written without one).
local function kv_set(key, value, ttl)
  kv_values[key] = value
  kv_writes[key] = ttl or kv_writes[key] or true
end

-- What the sliding log (the one algorithm whose state is not a string) writes at the end of decide.lua, after every
-- decision was made: log_finish(now) writes log_pending, the members the call's acquires admitted, per key ({window,
-- permits, shortest window, member, member...}), which a later decision of the call on the key counts and a delete drops. Both stay
-- nil in a script without a sliding log (a table made costs every call).
local log_pending, log_finish

-- The state of a window (fixed_window.lua, sliding_window_counter.lua): a number, then one or two counts, as the digits
-- of one integer: the number, each count, then each count's number of digits (1 to 9), so '493853' and 12 read
-- '493853122'. Redis keeps a value that reads as a 64-bit integer in the object itself, 16 bytes less per key than text
-- ('493853 12'), which is what a count with more than 9 digits is written as, and what states written before this
-- encoding are: both read back. Numbers stay text in Lua, whose doubles would round an integer of 17 digits.
local function pack_counts(n, a, b)
  -- Digits counted by comparison, and one string.format: a number turned into text by concatenation costs Redis a
  -- '%.14g' each.
  local la = (a < 10 and 1) or (a < 100 and 2) or (a < 1000 and 3) or (a < 1e4 and 4) or (a < 1e5 and 5)
      or (a < 1e6 and 6) or (a < 1e7 and 7) or (a < 1e8 and 8) or (a < 1e9 and 9) or 10
  if b == nil then
    if la < 10 then
      return string.format('%d%d%d', n, a, la)
    end
    return string.format('%d %d', n, a)
  end
  local lb = (b < 10 and 1) or (b < 100 and 2) or (b < 1000 and 3) or (b < 1e4 and 4) or (b < 1e5 and 5)
      or (b < 1e6 and 6) or (b < 1e7 and 7) or (b < 1e8 and 8) or (b < 1e9 and 9) or 10
  if la < 10 and lb < 10 then
    return string.format('%d%d%d%d%d', n, a, b, la, lb)
  end
  return string.format('%d %d %d', n, a, b)
end

-- The number and the counts of a state written by pack_counts (counts: 1 or 2). Up to 15 digits, by arithmetic on the
-- one number they make, exact in a double; else as text: a calendar window's start has 16 digits.
local function unpack_counts(v, counts)
  local x = #v <= 15 and tonumber(v)
  if x and x >= 0 then
    local la = x % 10
    x = (x - la) / 10
    if counts == 1 then
      local p = 10 ^ la
      local a = x % p
      return (x - a) / p, a
    end
    local lb = la
    la = x % 10
    x = (x - la) / 10
    local p = 10 ^ lb
    local b = x % p
    x = (x - b) / p
    p = 10 ^ la
    local a = x % p
    return (x - a) / p, a, b
  end
  if string.find(v, ' ', 1, true) then
    if counts == 1 then
      return string.match(v, '^(-?%d+) (%d+)$')
    end
    return string.match(v, '^(-?%d+) (%d+) (%d+)$')
  end
  if counts == 1 then
    local la = string.byte(v, -1) - 48
    return string.sub(v, 1, -2 - la), string.sub(v, -1 - la, -2)
  end
  local la, lb = string.byte(v, -2) - 48, string.byte(v, -1) - 48
  return string.sub(v, 1, -3 - la - lb), string.sub(v, -2 - la - lb, -3 - lb), string.sub(v, -2 - lb, -3)
end
