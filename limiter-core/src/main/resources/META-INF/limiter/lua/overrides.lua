-- Runtime overrides of limits' settings (io.github.limiter.spi.OverrideStore): one hash under the key prefix, a field
-- per limit whose value is its settings as 'name=value' lines. KEYS[1] the hash; ARGV[1] '' (no time is read);
-- ARGV[2] a limit to change, or '' to only read; ARGV[3] its settings, or '' to remove them.
-- Answers every field and value, as HGETALL does. Configuration, not state: the hash has no TTL.
if ARGV[2] ~= '' then
  if ARGV[3] ~= '' then
    redis.call('HSET', KEYS[1], ARGV[2], ARGV[3])
  else
    redis.call('HDEL', KEYS[1], ARGV[2])
  end
end
return redis.call('HGETALL', KEYS[1])
