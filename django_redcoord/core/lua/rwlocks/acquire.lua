-- rwlocks/acquire.lua (common/time, common/waiters, rwlocks/common prepended):
-- take a read or a write hold, or queue for it (FIFO, fair).
--
-- KEYS[1] state    hash (see rwlocks/common.lua)
-- KEYS[2] readers  zset: reader token -> lease expiry (ms)
-- KEYS[3] queue    list: waiter entries, oldest first
-- KEYS[4] index    hash (shared): name -> bound (s)
-- KEYS[5] wake     list: the caller's own wake list (the waiter queued behind it
--                  blocks on it: see common/waiters.lua)
-- KEYS[6] first    list: hand-offs for the waiter first in line
-- ARGV[1] token, ARGV[2] ttl_ms, ARGV[3] mode ('try' | 'queue' | 'wait' | 'cancel',
--         as for locks), ARGV[4] lease_ms, ARGV[5] name, ARGV[6] reentrant (unused),
--         ARGV[7] host, ARGV[8] pid, ARGV[9] thread
-- ARGV[10] kind    'r' a read hold, 'w' a write hold
--
-- Returns {1, fence, 1} when the caller holds (its lease runs at least ttl_ms
-- from this call: a hold handed to the caller earlier is renewed here),
-- {0, retry_ms} when not, and {0, retry_ms, ahead, floor} when queued ('queue',
-- 'wait'): block on `first` if ahead is '', else on the wake list of token
-- `ahead` (the live waiter just ahead of the caller or, first in line, the
-- owner of a hand-off still on `first`: common/waiters.lua pending_ahead).
-- floor: max(the last fence issued, server time in us); every
-- hand-off made after this call has a fence above it, so a "<fence> <token>"
-- popped from `first` with a fence not above it is stale (made before this
-- call, its lease gone: holds/chain.py ignores it and re-checks).

local state, readers, queue, index, wake, first = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]
local token, ttl, mode, lease, name = ARGV[1], tonumber(ARGV[2]), ARGV[3], tonumber(ARGV[4]), ARGV[5]
local host, pid, thread, kind = ARGV[7], tonumber(ARGV[8]) or 0, ARGV[9], ARGV[10]
local queued_before = mode == 'wait' or mode == 'cancel'

local clock = lazy_clock_us()
local now_ms = math.floor(clock() / 1000)
local meta = read_meta(state)
prune(state, readers, meta, now_ms)

local ours = held_by(state, kind, token)
if ours and kind == 'r' and tonumber(ours[3]) < now_ms then
  -- A reader's lease that ran out and was not pruned yet (prune takes 64 a
  -- call; a writer's is always pruned): not held; dropped.
  redis.call('ZREM', readers, token)
  redis.call('HDEL', state, 'r:' .. token)
  ours = nil
end
if ours then
  -- Ours already: handed to us while we were not blocked, or a retry
  -- (idempotent). The lease is renewed to ttl from now: the caller counts its
  -- lease from the start of this call, and a hand-off (made before it)
  -- started the lease earlier.
  local expires = now_ms + ttl
  if tonumber(ours[3]) < expires then
    ours[3] = expires
    if kind == 'w' then
      redis.call('HSET', state, 'w', cmsgpack.pack(ours))
      meta.writer = ours
    else
      redis.call('ZADD', readers, 'XX', expires, token)
      redis.call('HSET', state, 'r:' .. token, cmsgpack.pack(ours))
    end
    keep(state, readers, index, name, meta, expires, ttl)
  end
  forget_hand_off(first, token, ours[2])
  if queued_before then tell_next(wake, 'moved') end
  return {1, ours[2], 1}
end
if mode == 'cancel' then
  local at, raw = find_waiter(queue, token)
  if at then redis.call('LREM', queue, 1, raw) end
  tell_next(wake, 'moved')
  return {0, next_expiry(readers, meta, now_ms)}
end

-- Waiters before us first: whatever the state allows now (a lease ran out).
local _, mine = admit(state, readers, queue, index, name, meta, clock, token, first)
if mine then
  tell_next(wake, 'moved')
  return {1, mine, 1}
end
if not peek_live_waiter(queue, clock) and not meta.writer
    and (kind == 'r' or live_readers(readers, now_ms) == 0) then
  -- Nobody live waits before us and the state allows it.
  local fence = grant(state, readers, index, name, meta, kind, token, ttl, clock(), host, pid, thread)
  if queued_before then
    local at, raw = find_waiter(queue, token)
    if at then redis.call('LREM', queue, 1, raw) end
    tell_next(wake, 'moved')
  end
  return {1, fence, 1}
end

if mode ~= 'try' then
  local deadline = now_ms + math.min(lease, QUEUE_KEEP_MS)
  local length = place_waiter(queue, token, {token, deadline, ttl, wake, host, pid, thread, kind}, mode, now_ms)
  if length == 1 or meta.qu < deadline then
    redis.call('PEXPIRE', queue, 2 * QUEUE_KEEP_MS)
    redis.call('HSET', state, 'qu', now_ms + 2 * QUEUE_KEEP_MS)
    if redis.call('PTTL', state) < 2 * QUEUE_KEEP_MS then
      redis.call('PEXPIRE', state, 2 * QUEUE_KEEP_MS)
    end
  end
  local ahead = waiter_ahead(queue, token, clock, length ~= nil)
  if ahead == '' then
    ahead = pending_ahead(first, function(owner)
      if meta.writer and meta.writer[1] == owner then return true end
      local expires = redis.call('ZSCORE', readers, owner)
      return expires and tonumber(expires) >= now_ms
    end)
  end
  return {0, next_expiry(readers, meta, now_ms), ahead, math.max(meta.fence, clock())}
end
return {0, next_expiry(readers, meta, now_ms)}
