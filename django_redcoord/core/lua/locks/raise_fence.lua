-- locks/raise_fence.lua (common/time.lua, common/waiters.lua, locks/common.lua prepended): lift
-- the fencing token of a grant we own to the one a quorum lock (Redlock) chose.
--
-- A Redlock grant's fencing token is the highest of the tokens its masters
-- gave; writing it back to every master that granted makes the next grant on
-- any majority (which shares at least one master with this one) start above
-- it, and the tombstone a release leaves keeps it for a minute.
--
-- KEYS[1] lock     string: the lock record (see locks/common.lua)
-- ARGV[1] token    the caller's owner token
-- ARGV[2] fence    the fencing token to lift the record's to (no lower one is written)
--
-- Returns 0 not ours (expired or owned by someone else: untouched), 1 the
-- record's fence is now at least ARGV[2].

local rec = read_lock(KEYS[1])
if rec[1] ~= ARGV[1] then
  return 0
end
local fence = tonumber(ARGV[2])
if (tonumber(rec[2]) or 0) < fence then
  rec[2] = fence
  redis.call('SET', KEYS[1], cmsgpack.pack(rec), 'KEEPTTL')
end
return 1
