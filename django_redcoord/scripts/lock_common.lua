-- lock_common.lua: helpers shared by the lock scripts (prepended to them, after
-- common_time.lua).
--
-- Keys and arguments are those of the script that includes this file.
-- A waiter entry (field of the waiters hash, keyed by the waiter's token) is a
-- MessagePack array {deadline_ms, ttl_ms, wake_key, host, pid, thread}:
-- deadline_ms: server time after which the entry is dead (its owner stopped
-- renewing its place); ttl_ms: the TTL the waiter asked for; wake_key: the
-- list the waiter blocks on (its name comes from the Python key builder);
-- host, pid, thread: holder metadata for the admin. Encoded, never joined with
-- a separator: lock names and thread names may contain any allowed character.

-- Every queued waiter's place lapses within this many ms (the Python side
-- caps a waiter's lease below it), so the queue keys can expire after it.
local QUEUE_KEEP_MS = 15000

-- The fencing counter outlives the lock by this long (see next_monotonic).
local FENCE_KEEP_MS = 60000

-- Write a grant for `token` into the lock hash, issue the next fencing token
-- and update the live-locks index. Returns the new fencing token.
local function grant(lock, fence, index, name, token, ttl, now, host, pid, thread)
  local f = next_monotonic(fence, ttl + FENCE_KEEP_MS)
  redis.call('HSET', lock, 'token', token, 'fence', int(f), 'host', host, 'pid', pid,
             'thread', thread, 'acquired_ms', now, 'ttl_ms', ttl)
  -- no 'depth' field: absent means 1 (reentrant nesting adds it, release removes it)
  redis.call('PEXPIRE', lock, ttl)
  -- forget index entries of locks that expired under a crashed holder
  -- (released locks remove their own entry): O(log n) when there are none
  redis.call('ZREMRANGEBYSCORE', index, '-inf', '(' .. now)
  redis.call('ZADD', index, now + ttl, name)
  return f
end

-- Pop waiters from the head of the queue until a live one is found (at most
-- 64 per call so a script stays short; the rest are met by the next call).
-- `now` is a function giving the server time (asked for only when needed).
-- Returns token, ttl, wake_key, host, pid, thread - or nil.
local function pop_live_waiter(queue, waiters, now)
  for _ = 1, 64 do
    local w = redis.call('LPOP', queue)
    if not w then return nil end
    local entry = redis.call('HGET', waiters, w)
    redis.call('HDEL', waiters, w)
    if entry then
      local ok, e = pcall(cmsgpack.unpack, entry)
      if ok and type(e) == 'table' and tonumber(e[1]) and tonumber(e[1]) >= now() then
        return w, tonumber(e[2]), e[3], e[4], e[5], e[6]
      end
    end
  end
  return nil
end

-- Hand the lock to the oldest live waiter and wake it with its fencing token.
-- Returns that waiter's token, or nil when no live waiter is queued.
local function hand_off(lock, fence, queue, waiters, index, name, now)
  local w, ttl, wake, host, pid, thread = pop_live_waiter(queue, waiters, now)
  if not w then return nil end
  local f = grant(lock, fence, index, name, w, ttl, now(), host, pid, thread)
  redis.call('LPUSH', wake, int(f))
  redis.call('PEXPIRE', wake, ttl)
  return w
end
