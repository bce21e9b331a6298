-- locks/extend.lua (common/time.lua, common/waiters.lua, locks/common.lua prepended): reset the
-- time-to-live of a lock we own.
--
-- KEYS[1] lock     string: the lock record (see locks/common.lua)
-- KEYS[2] index    hash (the name's live-lock index bucket): name -> expiry bound
-- ARGV[1] token    the caller's owner token
-- ARGV[2] ttl_ms   new time-to-live from now, milliseconds
-- ARGV[3] name     the lock's name (field of the index bucket)
--
-- Returns 0 not ours (expired or owned by someone else: untouched), 1 extended.

local lock, index = KEYS[1], KEYS[2]
local token, ttl, name = ARGV[1], tonumber(ARGV[2]), ARGV[3]

local rec = read_lock(lock)
if rec[1] ~= token then
  return 0
end
rec[3] = server_now_ms() + ttl
-- PEXPIRE first: it takes no memory, so a full Redis runs the extend to its end
-- (see "Redis full" in locks/common.lua).
redis.call('PEXPIRE', lock, ttl)
keep_index(index, name, rec, ttl)
redis.call('SET', lock, cmsgpack.pack(rec), 'KEEPTTL')
return 1
