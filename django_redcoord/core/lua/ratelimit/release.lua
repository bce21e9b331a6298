-- ratelimit/release.lua (common/time prepended): give back a concurrency slot.
--
-- KEYS[1] inflight zset: concurrency slot token -> lease expiry (ms)
-- ARGV[1] token    the slot's token
--
-- Returns 1 released, 0 not held (its lease had run out).

return redis.call('ZREM', KEYS[1], ARGV[1])
