-- lock_acquire.lua (common_time.lua, lock_common.lua prepended): try to take a lock;
-- optionally queue for it (FIFO).
--
-- KEYS[1] lock     hash: token, fence, host, pid, thread, acquired_ms, ttl_ms,
--                  depth (only while a reentrant hold is nested)
-- KEYS[2] fence    integer: last fencing token issued for this name (expires
--                  FENCE_KEEP_MS after the lock's TTL; see next_monotonic)
-- KEYS[3] queue    list: waiter tokens, oldest first
-- KEYS[4] waiters  hash: waiter token -> entry (see lock_common.lua)
-- KEYS[5] index    zset: lock name -> expiry (ms since the epoch), for the admin
-- KEYS[6] wake     list this caller blocks on while queued
-- ARGV[1] token    the caller's owner token
-- ARGV[2] ttl_ms   lock time-to-live, milliseconds
-- ARGV[3] mode     'try'    take it if free and nobody is queued; never queue
--                  'queue'  as 'try', else join (or keep) a place in the queue
--                  'wait'   re-check from the waiting loop (no reentrant nesting)
--                  'cancel' give up: leave the queue unless already granted
-- ARGV[4] lease_ms how long the caller's place stays valid without another call
--                  (capped at QUEUE_KEEP_MS, lock_common.lua)
-- ARGV[5] name     the lock's name (member of the index)
-- ARGV[6] reentrant '1' if the same token nests (depth + 1), else '0'
-- ARGV[7] host, ARGV[8] pid, ARGV[9] thread: holder metadata for the admin page
--
-- Returns {1, fence, depth} when the caller holds the lock (fence: see next_monotonic),
--         {0, pttl_ms}      when not (pttl_ms: time left on the current
--                           holder's lock, 0 if it is free but others queue).

local lock, fence, queue, waiters, index, wake = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]
local token, ttl, mode, lease, name = ARGV[1], tonumber(ARGV[2]), ARGV[3], tonumber(ARGV[4]), ARGV[5]
local host, pid, thread = ARGV[7], ARGV[8], ARGV[9]

local function leave_queue()
  if redis.call('HDEL', waiters, token) == 1 then
    redis.call('LREM', queue, 1, token)
  end
  redis.call('DEL', wake)
end

local now = lazy_now()
local current = redis.call('HGET', lock, 'token')

if current == token then
  -- Ours already: handed to us while we were not blocked, a retry of an
  -- acquire whose reply was lost (idempotent), or reentrant nesting.
  local depth = tonumber(redis.call('HGET', lock, 'depth') or '1')
  if ARGV[6] == '1' and (mode == 'try' or mode == 'queue') then
    depth = depth + 1
    redis.call('HSET', lock, 'depth', depth)
  end
  if redis.call('PTTL', lock) < ttl then
    redis.call('PEXPIRE', lock, ttl)
    redis.call('HSET', lock, 'ttl_ms', ttl)
    redis.call('ZADD', index, now() + ttl, name)
  end
  leave_queue()
  return {1, tonumber(redis.call('HGET', lock, 'fence')), depth}
end

if not current then
  -- Free. Waiters queued before us go first: a lock that expired under its
  -- holder (crash) is handed to the oldest live waiter right here.
  local first = hand_off(lock, fence, queue, waiters, index, name, now)
  if first == token then
    -- We were the oldest live waiter: take it ourselves, no wake-up needed.
    redis.call('DEL', wake)
    return {1, tonumber(redis.call('HGET', lock, 'fence')), 1}
  end
  if not first then
    if mode == 'wait' or mode == 'cancel' then leave_queue() end -- never queued otherwise
    return {1, grant(lock, fence, index, name, token, ttl, now(), host, pid, thread), 1}
  end
end

if mode == 'cancel' then
  leave_queue()
elseif mode ~= 'try' then
  local entry = cmsgpack.pack({now() + math.min(lease, QUEUE_KEEP_MS), ttl, wake, host, pid, thread})
  if redis.call('HSET', waiters, token, entry) == 1 then
    redis.call('RPUSH', queue, token)
  end
  redis.call('PEXPIRE', queue, QUEUE_KEEP_MS)
  redis.call('PEXPIRE', waiters, QUEUE_KEEP_MS)
end
return {0, math.max(redis.call('PTTL', lock), 0)}
