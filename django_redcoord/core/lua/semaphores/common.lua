-- semaphores/common.lua: helpers of the semaphore scripts (prepended after
-- common/time.lua and common/waiters.lua). Keys and arguments are those of
-- the script that includes it.
--
-- A semaphore is, under its {name} hash tag:
--   state    hash: permits (the limit, once set by resize; else each caller's
--            own), cp (the limit callers last asked for, for the admin),
--            fence (the last fencing token issued), ib (the index
--            entry's bound, s), qu (the queue's TTL was pushed out to, ms), and
--            per holder 'h:<token>' -> cmsgpack {fence, expires_ms, host, pid, thread}
--   holders  zset: holder token -> expiry (ms): a permit is a lease; one that
--            expired (its holder crashed or paused) is pruned by the next call
--   queue    list: waiter entries, oldest first (common/waiters.lua)
--   index    hash (shared): semaphore name -> a bound on its holders' expiry (s)
-- The state and holder keys expire SEM_KEEP_MS after the index bound, and the
-- index SEM_KEEP_MS after its longest bound, so a semaphore nobody uses (or
-- whose holder crashed) leaves nothing behind.

local SEM_KEEP_MS = 60000

-- {permits, cp, fence, ib, qu} of the state hash (numbers or nil/0).
local function read_meta(state)
  local m = redis.call('HMGET', state, 'permits', 'cp', 'fence', 'ib', 'qu')
  return {permits = tonumber(m[1]), cp = tonumber(m[2]), fence = tonumber(m[3]) or 0,
          ib = tonumber(m[4]) or 0, qu = tonumber(m[5]) or 0}
end

-- The limit in force: one set by resize(), else the caller's (`arg`; the
-- admin passes none and gets the one callers last asked for), else 0.
local function limit_of(meta, arg)
  return meta.permits or tonumber(arg) or meta.cp or 0
end

-- Drop permits whose lease ran out (at most 64 per call; counts use
-- live_holders, so the ones left for the next call hold nothing meanwhile).
local function prune(state, holders, now_ms)
  local dead = redis.call('ZRANGEBYSCORE', holders, '-inf', '(' .. now_ms, 'LIMIT', 0, 64)
  for _, t in ipairs(dead) do
    redis.call('ZREM', holders, t)
    redis.call('HDEL', state, 'h:' .. t)
  end
end

-- Push the index bound (and the keys' expiry) out when a lease expiring at
-- `expires` would outlast it: about once per TTL, not on every grant.
local function keep(state, holders, index, name, meta, expires, ttl)
  if meta.ib * 1000 < expires then
    meta.ib = math.ceil((expires + ttl) / 1000)
    redis.call('HSET', state, 'ib', meta.ib)
    redis.call('HSET', index, name, meta.ib)
    index_prune(index, expires - ttl, 3)  -- (crashed holders' entries: common/index.lua)
    local at = meta.ib * 1000 + SEM_KEEP_MS
    redis.call('PEXPIREAT', state, at)
    redis.call('PEXPIREAT', holders, at)
    -- The shared index lives as long as its longest-lived entry (pushed out,
    -- never shortened; no PEXPIREAT GT on Redis 6.2): entries a crashed holder
    -- left behind go with it. `expires - ttl` is now (ms).
    local left = redis.call('PTTL', index)
    if left == -1 or expires - ttl + left < at then redis.call('PEXPIREAT', index, at) end
  end
end

-- A lease zset emptied by its last release is deleted by Redis; the ZADD of the
-- next grant re-creates it without a TTL, and keep() sets one only when the bound
-- moves: give it the keys' expiry (else a holder that then crashes leaves the
-- zset behind forever).
local function keep_ttl(key, meta)
  if redis.call('PTTL', key) < 0 then
    redis.call('PEXPIREAT', key, meta.ib * 1000 + SEM_KEEP_MS)
  end
end

-- Grant a permit to `token` with a new fencing token (a hybrid logical clock,
-- see next_monotonic); returns the fence.
local function grant(state, holders, index, name, meta, token, ttl, now_us, host, pid, thread)
  local now_ms = math.floor(now_us / 1000)
  local fence = math.max(meta.fence + 1, now_us)
  meta.fence = fence
  local expires = now_ms + ttl
  redis.call('ZADD', holders, expires, token)
  redis.call('HSET', state, 'fence', int(fence), 'h:' .. token, cmsgpack.pack({fence, expires, host, pid, thread}))
  keep(state, holders, index, name, meta, expires, ttl)
  keep_ttl(holders, meta)
  return fence
end

-- Holders whose lease has not run out.
local function live_holders(holders, now_ms)
  return redis.call('ZCOUNT', holders, now_ms, '+inf')
end

-- Hand free permits to the oldest live waiters (each hand-off pushed onto
-- `first`, see common/waiters.lua) until the limit is reached or nobody live
-- waits. The caller, if popped, is not woken: its fence is returned instead.
-- Returns handed, caller's fence.
local function fill(state, holders, queue, index, name, meta, limit, clock, caller, first)
  local held = live_holders(holders, math.floor(clock() / 1000))
  local handed, mine = 0, nil
  while held < limit do
    local e = pop_live_waiter(queue, clock)
    if not e then break end
    local f = grant(state, holders, index, name, meta, e[1], tonumber(e[3]), clock(), e[5], e[6], e[7])
    if e[1] == caller then mine = f else push_first(first, e[1], f) end
    held, handed = held + 1, handed + 1
  end
  return handed, mine, held
end

-- Ms until the earliest lease runs out (when a re-check may find a permit), or
-- 0 when nobody holds one: at least 1 while a lease is live (a waiter told 0
-- blocks a whole wait chunk, as if no lease could end its wait).
local function next_expiry(holders, now_ms)
  local first = redis.call('ZRANGE', holders, 0, 0, 'WITHSCORES')
  if first[2] then return math.max(1, tonumber(first[2]) - now_ms) end
  return 0
end

-- Nobody holds a permit: the semaphore leaves the index.
local function unindex_if_idle(state, holders, index, name, now_ms)
  if live_holders(holders, now_ms) == 0 then
    redis.call('HDEL', index, name)
    redis.call('HDEL', state, 'ib')
  end
end
