-- ratelimit/reset.lua (common/time prepended): forget everything a key has
-- counted (an operator's action): its next request starts afresh.
--
-- KEYS[1] state, KEYS[2] inflight (see hit.lua)
-- KEYS[3] top      zset of this minute's hits (see ratelimit/common.lua)
-- KEYS[4] before   zset of the minute before's
-- KEYS[5] cell     string: the state CL.THROTTLE keeps when the server decides
-- ARGV[1] member   the key as the admin shows it
--
-- Returns how many keys were deleted.

redis.call('ZREM', KEYS[3], ARGV[1])
redis.call('ZREM', KEYS[4], ARGV[1])
return redis.call('DEL', KEYS[1], KEYS[2], KEYS[5])
