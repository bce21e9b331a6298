-- lock_force_release.lua (common_time.lua, lock_common.lua prepended): an operator frees a lock.
--
-- Only the grant the operator saw is released: if the lock changed hands
-- since (another fencing token), nothing happens. Like a release, the lock
-- goes to the oldest live waiter if any; the former holder's next release or
-- extend raises LockLost.
--
-- KEYS[1] lock     hash: token, fence, host, pid, thread, acquired_ms, ttl_ms, depth
-- KEYS[2] fence    integer: last fencing token issued for this name
-- KEYS[3] queue    list: waiter tokens, oldest first
-- KEYS[4] waiters  hash: waiter token -> entry (see lock_common.lua)
-- KEYS[5] index    zset: lock name -> expiry (ms since the epoch)
-- ARGV[1] name     the lock's name (member of the index)
-- ARGV[2] fence    the fencing token of the grant to release
--
-- Returns 0 not held by that grant (untouched), 1 released, 2 handed to a waiter.

local lock, fence, queue, waiters, index = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local name = ARGV[1]
if redis.call('HGET', lock, 'fence') ~= ARGV[2] then
  return 0
end
redis.call('DEL', lock)
if hand_off(lock, fence, queue, waiters, index, name, lazy_now()) then
  return 2
end
redis.call('ZREM', index, name)
return 1
