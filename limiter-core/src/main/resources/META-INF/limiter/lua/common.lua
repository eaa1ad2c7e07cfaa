-- Helpers shared by the algorithm files; this file comes first in the composed script, so its locals are
-- visible to every algorithm (Redis forbids scripts to create globals).
local ALGORITHMS = {}

-- Integers as exact decimal text (tostring would print 1.7e15 with 14 significant digits).
local function fmt_int(x)
  return string.format('%d', x)
end

-- True only in tests that pass the time in ARGV[1]; production always reads the Redis TIME.
local virtual_time = ARGV[1] ~= ''

-- A time-to-live in milliseconds for a duration in microseconds, rounded up, at least 1. Under a virtual time the
-- real clock that expires keys is unrelated to the script's time, so keys then live at least a minute.
local function ttl_millis(micros)
  local ttl = math.max(1, math.ceil(micros / 1000))
  if virtual_time then
    return math.max(ttl, 60000)
  end
  return ttl
end
