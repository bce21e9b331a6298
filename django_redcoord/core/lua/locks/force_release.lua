-- locks/force_release.lua (common/time.lua, common/waiters.lua, locks/common.lua prepended): an
-- operator frees a lock.
--
-- Only the grant the operator saw is released: if the lock changed hands
-- since (another fencing token), nothing happens. Like a release, the lock
-- goes to the oldest live waiter if any (which blocks on the holder's wake
-- list, a key the operator cannot name: it finds the grant at its next
-- re-check, within its wait chunk); the former holder's next release or
-- extend raises LockLost.
--
-- KEYS[1] lock     string: the lock record (see locks/common.lua)
-- KEYS[2] queue    list: waiter entries, oldest first
-- KEYS[3] index    hash (the name's live-lock index bucket): name -> expiry bound
-- KEYS[4] waits    list: the name's waits per minute (see locks/common.lua)
-- KEYS[5] windex   hash (the name's wait-index bucket): name -> last minute with a wait
-- ARGV[1] name     the lock's name (field of the index bucket)
-- ARGV[2] fence    the fencing token of the grant to release
--
-- Returns 0 not held by that grant (untouched), 1 released, 2 handed to a waiter.

local lock, queue, index, waits, windex = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local name = ARGV[1]
local rec = read_lock(lock)
if not rec[1] or int(rec[2]) ~= ARGV[2] then
  return 0
end
return release_grant(lock, queue, index, waits, windex, name, rec)
