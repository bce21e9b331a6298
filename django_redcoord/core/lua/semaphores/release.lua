-- semaphores/release.lua (common/time, common/waiters, semaphores/common
-- prepended): give a permit back; free permits go to the oldest live waiters.
--
-- KEYS[1] state, KEYS[2] holders, KEYS[3] queue, KEYS[4] index, KEYS[5] first (see acquire.lua)
-- ARGV[1] token    the caller's owner token
-- ARGV[2] name     the semaphore's name
-- ARGV[3] permits  the caller's limit (a limit set by resize() wins)
--
-- Returns 0 not ours (the lease ran out or it was revoked: untouched),
--         1 released, 2 released and handed on to a waiter.

local state, holders, queue, index, first = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local token, name = ARGV[1], ARGV[2]

local clock = lazy_clock_us()
local now_ms = math.floor(clock() / 1000)
local score = redis.call('ZSCORE', holders, token)
if not score or tonumber(score) < now_ms then
  prune(state, holders, now_ms)
  return 0
end
redis.call('ZREM', holders, token)
redis.call('HDEL', state, 'h:' .. token)
prune(state, holders, now_ms)
local meta = read_meta(state)
local handed = fill(state, holders, queue, index, name, meta, limit_of(meta, ARGV[3]), clock, nil, first)
if handed > 0 then
  return 2
end
unindex_if_idle(state, holders, index, name, now_ms)
return 1
