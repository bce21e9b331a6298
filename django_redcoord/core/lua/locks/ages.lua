-- locks/ages.lua (common/time.lua, common/waiters.lua, locks/common.lua prepended): when the
-- grant of a lock began, for the admin's "held far too long" check (django_redcoord/trouble.py),
-- which sends many of these in one round trip. Reads only.
--
-- KEYS[1] lock   string: the lock record (see locks/common.lua)
-- ARGV    none
--
-- Returns the fencing token of the grant held (the grant's server time in
-- microseconds, unless the clock went back), or 0 when the lock is not held
-- (no key, a released lock's tombstone, or a value we did not write).

local ok, rec = pcall(read_lock, KEYS[1])
if ok and rec[1] then
  return tonumber(rec[2]) or 0
end
return 0
