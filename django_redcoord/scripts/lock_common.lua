-- lock_common.lua: helpers shared by the lock scripts (prepended to them).
--
-- Keys and arguments are those of the script that includes this file.
-- A waiter entry (field of the waiters hash, keyed by the waiter's token) is
--   "<deadline_ms>|<ttl_ms>|<wake_key>|<host>|<pid>|<thread>"
-- deadline_ms: server time after which the entry is dead (its owner stopped
-- renewing its place); ttl_ms: the TTL the waiter asked for; wake_key: the
-- list the waiter blocks on (its name comes from the Python key builder).

local function server_now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

-- The server time, read at most once per script run.
local function lazy_now()
  local cached
  return function()
    if not cached then cached = server_now_ms() end
    return cached
  end
end

-- Every queued waiter's place lapses within this many ms (the Python side
-- caps a waiter's lease below it), so the queue keys can expire after it.
local QUEUE_KEEP_MS = 15000

-- Write a grant for `token` into the lock hash, bump the fencing token and
-- the live-locks index. Returns the new fencing token.
local function grant(lock, fence, index, name, token, ttl, now, host, pid, thread)
  local f = redis.call('INCR', fence)
  redis.call('HSET', lock, 'token', token, 'fence', f, 'host', host, 'pid', pid,
             'thread', thread, 'acquired_ms', now, 'ttl_ms', ttl)
  -- no 'depth' field: absent means 1 (reentrant nesting adds it, release removes it)
  redis.call('PEXPIRE', lock, ttl)
  redis.call('ZADD', index, now + ttl, name)
  if f % 64 == 0 then
    -- now and then, forget index entries of locks that expired under a
    -- crashed holder (released locks remove their own entry)
    redis.call('ZREMRANGEBYSCORE', index, '-inf', now)
  end
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
      local deadline, ttl, wake, host, pid, thread =
        string.match(entry, '^(%d+)|(%d+)|([^|]*)|([^|]*)|([^|]*)|(.*)$')
      if deadline and tonumber(deadline) >= now() then
        return w, tonumber(ttl), wake, host, pid, thread
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
  redis.call('LPUSH', wake, f)
  redis.call('PEXPIRE', wake, ttl)
  return w
end
