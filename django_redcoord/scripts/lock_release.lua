-- lock_release.lua (common_time.lua, lock_common.lua prepended): release a lock we own; hand it to the oldest live waiter.
--
-- KEYS[1] lock     hash: token, fence, host, pid, thread, acquired_ms, ttl_ms, depth
-- KEYS[2] fence    integer: last fencing token issued for this name
-- KEYS[3] queue    list: waiter tokens, oldest first
-- KEYS[4] waiters  hash: waiter token -> entry (see lock_common.lua)
-- KEYS[5] index    zset: lock name -> expiry (ms since the epoch)
-- ARGV[1] token    the caller's owner token
-- ARGV[2] name     the lock's name (member of the index)
--
-- Returns 0 not ours (expired or owned by someone else: untouched),
--         1 released, nobody waiting,
--         2 released and handed to the oldest live waiter (woken),
--         3 still held: a reentrant hold was unwound by one level.

local lock, fence, queue, waiters, index = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local token, name = ARGV[1], ARGV[2]

local held = redis.call('HMGET', lock, 'token', 'depth')
if held[1] ~= token then
  return 0
end
if held[2] and tonumber(held[2]) > 1 then
  if tonumber(held[2]) == 2 then
    redis.call('HDEL', lock, 'depth')
  else
    redis.call('HSET', lock, 'depth', tonumber(held[2]) - 1)
  end
  return 3
end
if hand_off(lock, fence, queue, waiters, index, name, lazy_now()) then
  return 2
end
redis.call('DEL', lock)
redis.call('ZREM', index, name)
return 1
