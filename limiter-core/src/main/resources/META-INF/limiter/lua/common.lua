-- Helpers shared by the algorithm files; this file comes first in the composed script, so its locals are
-- visible to every algorithm (Redis forbids scripts to create globals).
local ALGORITHMS = {}

-- Integers as exact decimal text (tostring would print 1.7e15 with 14 significant digits).
local function fmt_int(x)
  return string.format('%d', x)
end

-- A time-to-live in milliseconds for a duration in microseconds, rounded up, at least 1.
local function ttl_millis(micros)
  return math.max(1, math.ceil(micros / 1000))
end
