-- semaphores/extend.lua (common/time, common/waiters, semaphores/common
-- prepended): renew the lease of a permit we hold.
--
-- KEYS[1] state, KEYS[2] holders, KEYS[3] index (see acquire.lua)
-- ARGV[1] token    the caller's owner token
-- ARGV[2] ttl_ms   new lease from now, milliseconds
-- ARGV[3] name     the semaphore's name
-- ARGV[4] permits  unused (the contract's extra argument)
--
-- Returns 0 not ours (the lease ran out or it was revoked), 1 extended.

local state, holders, index = KEYS[1], KEYS[2], KEYS[3]
local token, ttl, name = ARGV[1], tonumber(ARGV[2]), ARGV[3]

local now_ms = server_now_ms()
local score = redis.call('ZSCORE', holders, token)
local raw = redis.call('HGET', state, 'h:' .. token)
if not score or tonumber(score) < now_ms or not raw then
  return 0
end
local expires = now_ms + ttl
run_when_full(holders)  -- (a renewal: see common/time.lua)
redis.call('ZADD', holders, 'XX', expires, token)
local ok, rec = pcall(cmsgpack.unpack, raw)
if ok and type(rec) == 'table' then
  rec[2] = expires
  redis.call('HSET', state, 'h:' .. token, cmsgpack.pack(rec))
end
keep(state, holders, index, name, read_meta(state), expires, ttl)
return 1
