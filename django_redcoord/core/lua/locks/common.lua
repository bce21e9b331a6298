-- locks/common.lua: helpers shared by the lock scripts (prepended to them, after
-- common/time.lua and common/waiters.lua). Keys and arguments are those of the
-- script that includes it.
--
-- The lock key is ONE string (a live lock is one key and one index entry):
--   cmsgpack {token, fence, expires_ms, depth, host, pid, thread,
--             queue_until_ms, index_until_s}
-- token: the holder's owner token; fence: its fencing token; expires_ms: server
-- time the grant runs out (the key's PX TTL says the same); depth: reentrant
-- nesting (1 unless nested); host, pid, thread: holder metadata for the admin;
-- queue_until_ms: the queue list's TTL was last pushed out to at least this (so
-- a waiter refreshes it about once per QUEUE_KEEP_MS, not on every enqueue);
-- index_until_s: the bound last written to the index entry (below), in seconds.
-- A released lock leaves a tombstone {false, fence} for FENCE_KEEP_MS so the
-- next grant's fence is above the last one even within one microsecond.
--
-- The index entry (field `name` of the lock's index bucket hash) is a bound on
-- when the lock can expire, in whole seconds (small in memory): written as
-- expires + ttl whenever a grant or renewal would outlast the bound in place.
-- So a lock handed from waiter to waiter rewrites it about once per TTL, and
-- an entry whose bound has passed
-- is certainly dead (its holder crashed): the admin skips it and fresh grants
-- prune such entries from their bucket.
--
-- Waiters queue as common/waiters.lua describes.

-- A released lock's tombstone (its last fence) lives this long.
local FENCE_KEEP_MS = 60000

-- Push the index entry's bound out when the grant in `rec` (expiring at
-- rec[3]) would outlast it: to expiry + ttl, so a lock renewed or handed on
-- rewrites its entry about once per TTL. Updates rec[9].
local function keep_index(index, name, rec, ttl)
  if (tonumber(rec[9]) or 0) * 1000 < rec[3] then
    rec[9] = math.ceil((rec[3] + ttl) / 1000)
    redis.call('HSET', index, name, rec[9])
  end
end

-- The lock record, or a free record {false, last fence or 0}.
local function read_lock(lock)
  local raw = redis.call('GET', lock)
  if raw then
    local ok, rec = pcall(cmsgpack.unpack, raw)
    if ok and type(rec) == 'table' then return rec end
  end
  return {false, 0}
end

-- Write a grant and keep its index entry's bound; returns the new record.
-- The fence is a hybrid logical clock (see next_monotonic): above the last one
-- kept in the record or tombstone, and above every earlier one by the clock
-- alone when Redis lost the key.
local function write_grant(lock, index, name, rec, token, ttl, now_us, host, pid, thread)
  local now_ms = math.floor(now_us / 1000)
  local fence = math.max((tonumber(rec[2]) or 0) + 1, now_us)
  local new = {token, fence, now_ms + ttl, 1, host, pid, thread, tonumber(rec[8]) or 0, tonumber(rec[9]) or 0}
  keep_index(index, name, new, ttl)
  redis.call('SET', lock, cmsgpack.pack(new), 'PX', ttl)
  return new
end

-- Hand the lock to the oldest live waiter and wake it with its fencing token
-- (unless it is `caller`, who gets the reply instead). Returns the new record,
-- or nil when no live waiter is queued.
local function hand_off(lock, queue, index, name, rec, clock, caller)
  local e = pop_live_waiter(queue, clock)
  if not e then return nil end
  local new = write_grant(lock, index, name, rec, e[1], tonumber(e[3]), clock(), e[5], e[6], e[7])
  if e[1] ~= caller then wake_waiter(e, new[2]) end
  return new
end

-- End the grant in `rec`: hand the lock to the oldest live waiter, else leave
-- a tombstone with the last fence and drop the index entry. Returns 2 when
-- handed off, 1 when freed (the index entry stays while the lock passes from
-- hand to hand).
local function release_grant(lock, queue, index, name, rec)
  if hand_off(lock, queue, index, name, rec, lazy_clock_us(), nil) then
    return 2
  end
  redis.call('SET', lock, cmsgpack.pack({false, rec[2]}), 'PX', FENCE_KEEP_MS)
  redis.call('HDEL', index, name)
  return 1
end
