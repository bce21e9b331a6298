-- locks/inspect.lua (common/time.lua, common/waiters.lua, locks/common.lua prepended): who holds a
-- lock, read in one round trip and returned field by field (the record is
-- MessagePack, which a client that decodes replies could not read whole).
--
-- KEYS[1] lock     string: the lock record (see locks/common.lua)
-- KEYS[2] queue    list: waiter entries, oldest first
--
-- Returns {} when nobody holds the lock (no key, or a released lock's
-- tombstone), else {token, fence, pttl_ms, depth, host, pid, thread, queued,
-- expires_ms}: queued is the length of the queue (places that lapsed included
-- until the next grant pops them); expires_ms the server time the grant ends.

local rec = read_lock(KEYS[1])
if not rec[1] then
  return {}
end
local pttl = redis.call('PTTL', KEYS[1])
if pttl < 0 then
  return {}
end
return {rec[1], rec[2], pttl, tonumber(rec[4]) or 1, rec[5] or '', tonumber(rec[6]) or 0,
        rec[7] or '', redis.call('LLEN', KEYS[2]), tonumber(rec[3]) or 0}
