-- semaphores/acquire.lua (common/time, common/waiters, semaphores/common
-- prepended): take a permit, or queue for one (FIFO).
--
-- KEYS[1] state    hash (see semaphores/common.lua)
-- KEYS[2] holders  zset: holder token -> lease expiry (ms)
-- KEYS[3] queue    list: waiter entries, oldest first (common/waiters.lua)
-- KEYS[4] index    hash (shared): semaphore name -> bound (s)
-- KEYS[5] wake     list: the caller's own wake list (the waiter queued behind it
--                  blocks on it: see common/waiters.lua)
-- KEYS[6] first    list: hand-offs for the waiter first in line
-- ARGV[1] token    the caller's owner token
-- ARGV[2] ttl_ms   lease of the permit, milliseconds
-- ARGV[3] mode     'try' take a permit if one is free and nobody live waits
--                  'queue' as 'try', else join the queue (first call of a wait)
--                  'wait' re-check from the waiting loop: renew our place, or
--                  take a new one if it lapsed (idempotent)
--                  'cancel' give up: leave the queue unless already granted
-- ARGV[4] lease_ms how long the caller's place stays valid without another call
-- ARGV[5] name     the semaphore's name (field of the index)
-- ARGV[6] reentrant unused ('0': permits do not nest)
-- ARGV[7] host, ARGV[8] pid, ARGV[9] thread: holder metadata for the admin
-- ARGV[10] permits the caller's limit (a limit set by resize() wins)
--
-- Returns {1, fence, 1}         when the caller holds a permit (its lease runs
--                               at least ttl_ms from this call: a permit handed
--                               to the caller earlier is renewed here),
--         {0, retry_ms}         when not (retry_ms: until the earliest lease runs out),
--         {0, retry_ms, ahead, floor} when queued ('queue', 'wait'): block on `first`
--                               if ahead is '', else on the wake list of token
--                               `ahead` (the live waiter just ahead of the caller
--                               or, first in line, the owner of a hand-off still
--                               on `first`: common/waiters.lua pending_ahead).
--                               floor: max(the last fence issued, server
--                               time in us); every hand-off made after this call
--                               has a fence above it, so a "<fence> <token>" popped
--                               from `first` with a fence not above it is stale (made
--                               before this call, its lease gone: holds/chain.py
--                               ignores it and re-checks).

local state, holders, queue, index, wake, first = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]
local token, ttl, mode, lease, name = ARGV[1], tonumber(ARGV[2]), ARGV[3], tonumber(ARGV[4]), ARGV[5]
local host, pid, thread = ARGV[7], tonumber(ARGV[8]) or 0, ARGV[9]
local queued_before = mode == 'wait' or mode == 'cancel'

local clock = lazy_clock_us()
local now_ms = math.floor(clock() / 1000)
prune(state, holders, now_ms)

local ours = redis.call('HGET', state, 'h:' .. token)
local score = ours and tonumber(redis.call('ZSCORE', holders, token))
if ours and not (score and score >= now_ms) then
  -- A lease of ours that ran out and was not pruned yet (prune takes 64 a
  -- call): not held; dropped.
  redis.call('ZREM', holders, token)
  redis.call('HDEL', state, 'h:' .. token)
  ours = nil
end
if ours then
  -- Ours already: handed to us while we were not blocked, or a retry of an
  -- acquire whose reply was lost (idempotent). The lease is renewed to ttl
  -- from now: the caller counts its lease from the start of this call, and a
  -- hand-off (made before it) started the lease earlier.
  local ok, rec = pcall(cmsgpack.unpack, ours)
  local expires = now_ms + ttl
  if score < expires then
    redis.call('ZADD', holders, 'XX', expires, token)
    if ok and type(rec) == 'table' then
      rec[2] = expires
      redis.call('HSET', state, 'h:' .. token, cmsgpack.pack(rec))
    end
    keep(state, holders, index, name, read_meta(state), expires, ttl)
  end
  if ok and type(rec) == 'table' then forget_hand_off(first, token, rec[1]) end
  if queued_before then tell_next(wake, 'moved') end
  return {1, ok and rec[1] or 0, 1}
end

if mode == 'cancel' then
  local at, raw = find_waiter(queue, token)
  if at then redis.call('LREM', queue, 1, raw) end
  tell_next(wake, 'moved')
  return {0, next_expiry(holders, now_ms)}
end

local meta = read_meta(state)
local limit = limit_of(meta, ARGV[10])
if meta.cp ~= tonumber(ARGV[10]) then
  redis.call('HSET', state, 'cp', ARGV[10])
  if redis.call('PTTL', state) == -1 then redis.call('PEXPIRE', state, SEM_KEEP_MS) end
end
-- Free permits go to the waiters queued before us first (no barging).
local handed, mine, held = fill(state, holders, queue, index, name, meta, limit, clock, token, first)
if mine then
  tell_next(wake, 'moved')
  return {1, mine, 1}
end
if held < limit then
  -- A permit is free and nobody live waits ahead of us.
  local fence = grant(state, holders, index, name, meta, token, ttl, clock(), host, pid, thread)
  if queued_before then
    local at, raw = find_waiter(queue, token)
    if at then redis.call('LREM', queue, 1, raw) end
    tell_next(wake, 'moved')
  end
  return {1, fence, 1}
end

if mode ~= 'try' then
  local deadline = now_ms + math.min(lease, QUEUE_KEEP_MS)
  local length = place_waiter(queue, token, {token, deadline, ttl, wake, host, pid, thread}, mode, now_ms)
  -- The queue outlives every live place in it (pushed out about once per
  -- QUEUE_KEEP_MS, recorded in the state).
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
      local expires = redis.call('ZSCORE', holders, owner)
      return expires and tonumber(expires) >= now_ms
    end)
  end
  return {0, next_expiry(holders, now_ms), ahead, math.max(meta.fence, clock())}
end
return {0, next_expiry(holders, now_ms)}
