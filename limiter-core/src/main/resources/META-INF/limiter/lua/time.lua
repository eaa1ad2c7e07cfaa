-- The time of this call in microseconds, as the local 'now': the Redis TIME, or the test's time in ARGV[1]
-- (virtual_time, common.lua). Composed before the drivers that read it (decide.lua, instances.lua), not into
-- overrides.lua, which reads no time.
local now
if virtual_time then
  now = ARGV[1] + 0
else
  local t = redis.call('TIME')
  now = t[1] * 1000000 + t[2]
end
