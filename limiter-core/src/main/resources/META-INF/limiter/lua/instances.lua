-- The instances sharing this key prefix: a sorted set of instance IDs scored by the Redis time (milliseconds) at
-- which each announcement runs out. KEYS[1] the set; ARGV[1] '' (the time comes from Redis); ARGV[2] the instance;
-- ARGV[3] how long the announcement holds, in milliseconds, or 0 to withdraw. Answers { the number of instances alive }.
now = math.floor(now / 1000)
local ttl = tonumber(ARGV[3])
if ttl > 0 then
  -- The announcement first: a Redis out of memory refuses it, as it refuses every decision, and the guard then sees
  -- an outage. After a write that shrinks the set, Redis would let it through to keep the script whole.
  redis.call('ZADD', KEYS[1], now + ttl, ARGV[2])
  redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
  -- The set lives as long as its longest announcement (instances may be configured with different heartbeats).
  if redis.call('PTTL', KEYS[1]) < ttl then
    redis.call('PEXPIRE', KEYS[1], ttl)
  end
else
  redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
  redis.call('ZREM', KEYS[1], ARGV[2])
end
return { redis.call('ZCARD', KEYS[1]) }
