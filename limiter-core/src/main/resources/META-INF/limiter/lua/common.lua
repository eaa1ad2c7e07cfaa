-- Helpers shared by the algorithm files; this file comes first in the composed script, so its locals are
-- visible to every algorithm (Redis forbids scripts to create globals).
local ALGORITHMS = {}

-- Integers are written as exact decimal text with string.format('%d', x) (tostring would print 1.7e15 with 14
-- significant digits), inline: every function a script defines costs each call its creation.

-- True only in tests that pass the time in ARGV[1]; production always reads the Redis TIME (time.lua; Lua turns
-- numeric text into a number in arithmetic, at half the cost of a call of tonumber).
local virtual_time = ARGV[1] ~= ''

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
-- nil.
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
