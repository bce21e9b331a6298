-- locks/release.lua (common/time.lua, common/waiters.lua, locks/common.lua prepended): release a lock
-- we own; hand it to the oldest live waiter.
--
-- KEYS[1] lock     string: the lock record (see locks/common.lua)
-- KEYS[2] queue    list: waiter entries, oldest first
-- KEYS[3] index    hash (the name's live-lock index bucket): name -> expiry bound
-- KEYS[4] waits    list: the name's waits per minute (see locks/common.lua)
-- KEYS[5] windex   hash (the name's wait-index bucket): name -> last minute with a wait
-- KEYS[6] wake     list: the caller's own wake list, on which the oldest waiter
--                  blocks; a hand-off pushes "<fence> <token>" onto it (see
--                  locks/common.lua). Optional (a Redlock master has no waiters).
-- ARGV[1] token    the caller's owner token
-- ARGV[2] name     the lock's name (field of the index bucket)
-- ARGV[3] process  the caller's process id (optional; see locks/acquire.lua):
--                  a hand-off to a waiter of the same process is not pushed
--
-- Returns 0 not ours (expired or owned by someone else: untouched),
--         1 released, nobody waiting,
--         2 released and handed to the oldest live waiter (woken),
--         {2, "<fence> <token>"} released and handed to a waiter of the
--           caller's process, not woken: the caller hands it that element
--           in-process (transport/nearby.py),
--         3 still held: a reentrant hold was unwound by one level.

local lock, queue, index, waits, windex, wake = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]
local token, name, process = ARGV[1], ARGV[2], ARGV[3]

local rec = read_lock(lock)
if rec[1] ~= token then
  return 0
end
local depth = tonumber(rec[4]) or 1
if depth > 1 then
  rec[4] = depth - 1
  -- A PEXPIRE that keeps the TTL first: it takes no memory, so a full Redis runs
  -- the unwinding to its end (see "Redis full" in locks/common.lua).
  local pttl = redis.call('PTTL', lock)
  if pttl > 0 then redis.call('PEXPIRE', lock, pttl) end
  redis.call('SET', lock, cmsgpack.pack(rec), 'KEEPTTL')
  return 3
end
return release_grant(lock, queue, index, waits, windex, name, rec, wake, process)
