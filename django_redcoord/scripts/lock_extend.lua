-- lock_extend.lua: reset the time-to-live of a lock we own (common_time.lua prepended).
--
-- KEYS[1] lock     hash: token, fence, ..., ttl_ms
-- KEYS[2] index    zset: lock name -> expiry (ms since the epoch)
-- ARGV[1] token    the caller's owner token
-- ARGV[2] ttl_ms   new time-to-live from now, milliseconds
-- ARGV[3] name     the lock's name (member of the index)
--
-- Returns 0 not ours (expired or owned by someone else: untouched), 1 extended.

local lock, index = KEYS[1], KEYS[2]
local token, ttl, name = ARGV[1], tonumber(ARGV[2]), ARGV[3]

if redis.call('HGET', lock, 'token') ~= token then
  return 0
end
redis.call('PEXPIRE', lock, ttl)
redis.call('HSET', lock, 'ttl_ms', ttl)
redis.call('ZADD', index, server_now_ms() + ttl, name)
return 1
