-- rwlocks/common.lua: helpers of the read-write lock scripts (prepended after
-- common/time.lua and common/waiters.lua). Keys and arguments are those of
-- the script that includes it.
--
-- A read-write lock is, under its {name} hash tag:
--   state    hash: w (the writer: cmsgpack {token, fence, expires_ms, host,
--            pid, thread}, absent when no writer), fence (the last fencing
--            token issued), ib (the index bound, s), qu (the queue's TTL was
--            pushed out to, ms), and per reader 'r:<token>' -> cmsgpack {token,
--            fence, expires_ms, host, pid, thread}
--   readers  zset: reader token -> lease expiry (ms)
--   queue    list: waiter entries, oldest first (common/waiters.lua), each
--            with 'r' or 'w' as its extra field (e[8])
--   index    hash (shared): name -> a bound on its holders' expiry (s)
-- The state and readers keys expire RW_KEEP_MS after the index bound, and the
-- index RW_KEEP_MS after its longest bound (nothing is left behind).
-- Fair in request order: a request is granted only when nobody live waits
-- before it, so a waiting writer holds back readers that come after it, and
-- readers queued together enter together.

local RW_KEEP_MS = 60000

local function read_meta(state)
  local m = redis.call('HMGET', state, 'w', 'fence', 'ib', 'qu')
  local writer
  if m[1] then
    local ok, rec = pcall(cmsgpack.unpack, m[1])
    if ok and type(rec) == 'table' then writer = rec end
  end
  return {writer = writer, fence = tonumber(m[2]) or 0, ib = tonumber(m[3]) or 0, qu = tonumber(m[4]) or 0}
end

-- Drop leases that ran out: the writer's, and readers' (at most 64 per call;
-- counts use live_readers, so the ones left hold nothing meanwhile).
local function prune(state, readers, meta, now_ms)
  if meta.writer and tonumber(meta.writer[3]) < now_ms then
    redis.call('HDEL', state, 'w')
    meta.writer = nil
  end
  local dead = redis.call('ZRANGEBYSCORE', readers, '-inf', '(' .. now_ms, 'LIMIT', 0, 64)
  for _, t in ipairs(dead) do
    redis.call('ZREM', readers, t)
    redis.call('HDEL', state, 'r:' .. t)
  end
end

-- Readers whose lease has not run out.
local function live_readers(readers, now_ms)
  return redis.call('ZCOUNT', readers, now_ms, '+inf')
end

local function keep(state, readers, index, name, meta, expires, ttl)
  if meta.ib * 1000 < expires then
    meta.ib = math.ceil((expires + ttl) / 1000)
    redis.call('HSET', state, 'ib', meta.ib)
    redis.call('HSET', index, name, meta.ib)
    index_prune(index, expires - ttl, 3)  -- (crashed holders' entries: common/index.lua)
    local at = meta.ib * 1000 + RW_KEEP_MS
    redis.call('PEXPIREAT', state, at)
    redis.call('PEXPIREAT', readers, at)
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
    redis.call('PEXPIREAT', key, meta.ib * 1000 + RW_KEEP_MS)
  end
end

-- Grant a read ('r') or write ('w') hold to `token`; returns its fence.
local function grant(state, readers, index, name, meta, kind, token, ttl, now_us, host, pid, thread)
  local now_ms = math.floor(now_us / 1000)
  local fence = math.max(meta.fence + 1, now_us)
  meta.fence = fence
  local expires = now_ms + ttl
  local rec = cmsgpack.pack({token, fence, expires, host, pid, thread})
  if kind == 'w' then
    redis.call('HSET', state, 'fence', int(fence), 'w', rec)
    meta.writer = {token, fence, expires, host, pid, thread}
  else
    redis.call('ZADD', readers, expires, token)
    redis.call('HSET', state, 'fence', int(fence), 'r:' .. token, rec)
  end
  keep(state, readers, index, name, meta, expires, ttl)
  keep_ttl(readers, meta)
  return fence
end

-- Admit the waiters at the head of the queue while the state allows: one
-- writer when nobody holds, or every reader up to the next writer while no
-- writer holds; each hand-off is pushed onto `first` (common/waiters.lua).
-- The caller, if admitted, is not woken: its fence is returned.
local function admit(state, readers, queue, index, name, meta, clock, caller, first)
  local handed, mine = 0, nil
  while true do
    local head = peek_live_waiter(queue, clock)
    if not head or meta.writer then break end
    local kind = head[8] == 'w' and 'w' or 'r'
    if kind == 'w' and live_readers(readers, math.floor(clock() / 1000)) > 0 then break end
    redis.call('LPOP', queue)
    local f = grant(state, readers, index, name, meta, kind, head[1], tonumber(head[3]), clock(), head[5], head[6], head[7])
    if head[1] == caller then mine = f else push_first(first, head[1], f) end
    handed = handed + 1
    if kind == 'w' then break end
  end
  return handed, mine
end

-- Ms until a re-check may find the lock free: the writer's lease, else the
-- earliest reader's; 0 when nobody holds (at least 1 while a lease is live: a
-- waiter told 0 blocks a whole wait chunk).
local function next_expiry(readers, meta, now_ms)
  if meta.writer then return math.max(1, tonumber(meta.writer[3]) - now_ms) end
  local first = redis.call('ZRANGE', readers, 0, 0, 'WITHSCORES')
  if first[2] then return math.max(1, tonumber(first[2]) - now_ms) end
  return 0
end

local function unindex_if_idle(state, readers, index, name, meta, now_ms)
  if not meta.writer and live_readers(readers, now_ms) == 0 then
    redis.call('HDEL', index, name)
    redis.call('HDEL', state, 'ib')
  end
end

-- The caller's grant, if it holds one: its record (a table), or nil.
local function held_by(state, kind, token)
  local raw = redis.call('HGET', state, kind == 'w' and 'w' or 'r:' .. token)
  if not raw then return nil end
  local ok, rec = pcall(cmsgpack.unpack, raw)
  if ok and type(rec) == 'table' and rec[1] == token then return rec end
  return nil
end
