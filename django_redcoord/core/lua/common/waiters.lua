-- common/waiters.lua: the FIFO queue of waiters every held primitive shares
-- (locks, semaphores, read-write locks); prepended after common/time.lua.
--
-- A waiter's entry (element of the primitive's queue list, oldest first) is
--   cmsgpack {token, deadline_ms, ttl_ms, wake_key, host, pid, thread, extra,
--             queued_ms}
-- deadline_ms: server time after which the place is dead (its owner stopped
-- renewing it); ttl_ms: the TTL it asked for; wake_key: the list it blocks on
-- (named by the Python key builder); host, pid, thread: holder metadata for
-- the admin; extra: what the primitive needs (a read-write lock: 'r' or 'w',
-- else ''); queued_ms: server time the place was taken (kept when it is
-- renewed), so a grant knows how long its waiter waited.
-- Encoded, never joined with a separator: names and thread names may contain
-- any allowed character.

-- Every queued waiter's place lapses within this many ms (the Python side
-- caps a waiter's lease below it).
local QUEUE_KEEP_MS = 15000

local function live_entry(raw, clock)
  local ok, e = pcall(cmsgpack.unpack, raw)
  if ok and type(e) == 'table' and tonumber(e[2]) and tonumber(e[2]) * 1000 >= clock() then return e end
  return nil
end

-- The first live waiter of the queue and its 1-based position, dropping the
-- dead ones before it (their owners stopped renewing: killed or paused) in
-- batches, however many there are: each dead entry is read once, ever.
local function first_live_waiter(queue, clock)
  while true do
    local batch = redis.call('LRANGE', queue, 0, 127)
    if #batch == 0 then return nil end
    for i, raw in ipairs(batch) do
      local e = live_entry(raw, clock)
      if e then
        if i > 1 then redis.call('LTRIM', queue, i - 1, -1) end
        return e
      end
    end
    redis.call('LTRIM', queue, #batch, -1)
  end
end

-- The next live waiter at the head of the queue, popped (the dead ones before
-- it are dropped). `clock` gives the server time in microseconds.
local function pop_live_waiter(queue, clock)
  local e = first_live_waiter(queue, clock)
  if e then redis.call('LPOP', queue) end
  return e
end

-- The live waiter at the head of the queue, not popped (the dead ones before
-- it are dropped); nil when no live waiter is queued.
local function peek_live_waiter(queue, clock)
  return first_live_waiter(queue, clock)
end

-- Position (0-based) of `token`'s entry in the queue, or nil: a scan, used
-- only when a waiter renews or gives up its place (never on the first enqueue).
local function find_waiter(queue, token)
  local entries = redis.call('LRANGE', queue, 0, -1)
  for i, raw in ipairs(entries) do
    local ok, e = pcall(cmsgpack.unpack, raw)
    if ok and type(e) == 'table' and e[1] == token then return i - 1, raw end
  end
  return nil
end

-- Take a place for `token` (mode 'queue': at the back) or renew it (mode
-- 'wait': in place, keeping the time it was taken, or at the back if it
-- lapsed). `e` is the entry as a table (fields 1-8 above); queued_ms is set
-- here from `now_ms`. Returns the queue's length when a new place was made
-- (1: the queue was just created), else nil.
local function place_waiter(queue, token, e, mode, now_ms)
  local at, raw
  if mode == 'wait' then at, raw = find_waiter(queue, token) end
  e[8] = e[8] or ''
  e[9] = now_ms
  if at then
    local ok, old = pcall(cmsgpack.unpack, raw)
    if ok and type(old) == 'table' and tonumber(old[9]) then e[9] = tonumber(old[9]) end
    redis.call('LSET', queue, at, cmsgpack.pack(e))
    return nil
  end
  return redis.call('RPUSH', queue, cmsgpack.pack(e))
end

-- Leave the queue: remove `token`'s place, if any, and its wake list.
local function leave_queue(queue, token, wake)
  local at, raw = find_waiter(queue, token)
  if at then redis.call('LREM', queue, 1, raw) end
  redis.call('DEL', wake)
end

-- A chain of wake lists (semaphores): the waiter first in line blocks on the
-- primitive's `first` list, onto which every hand-off pushes "<fence> <token>"
-- (a declared key); every other waiter blocks on the wake list of the live
-- waiter just ahead of it, which pushes 'moved' there when it leaves the line
-- (see tell_next), so the next one takes its turn.

-- The owner token of the live waiter just ahead of `token` in the queue, or
-- `none` ('' if not given) when `token` is first (a lock passes its holder's).
-- `last`: our place was just made at the back, so the entry before it is read
-- alone (when live); else a scan.
local function waiter_ahead(queue, token, clock, last, none)
  none = none or ''
  if last then
    local raw = redis.call('LINDEX', queue, -2)
    if not raw then return none end
    local e = live_entry(raw, clock)
    if e and e[1] ~= token then return e[1] end
  end
  local ahead = none
  for _, raw in ipairs(redis.call('LRANGE', queue, 0, -1)) do
    local e = live_entry(raw, clock)
    if e then
      if e[1] == token then return ahead end
      ahead = e[1]
    end
  end
  return none
end

-- The owner of the newest hand-off on `first` that its owner has not popped
-- yet, or '' when there is none: a waiter with nobody live ahead of it in the
-- queue blocks behind that owner (who pushes 'first' onto its wake list once
-- it has popped its hand-off, holds/chain.py), not on `first`, where it could
-- pop that hand-off itself and leave its owner waiting out its whole block.
-- `holds(token)`: whether `token` holds now; a hand-off whose owner does not
-- (its lease ran out, or was revoked) is dropped. An owner that finds its
-- grant by a look removes its hand-off (forget_hand_off).
local function pending_ahead(first, holds)
  while true do
    local raw = redis.call('LINDEX', first, -1)
    if not raw then return '' end
    local owner = string.match(raw, '^%d+ (.+)$')
    if owner and holds(owner) then return owner end
    redis.call('RPOP', first)
  end
end

-- The caller found its grant by a look: its hand-off on `first`, if one was
-- pushed, is dropped (nobody is to wait behind it, nor pop it).
local function forget_hand_off(first, token, fence)
  redis.call('LREM', first, 1, int(fence) .. ' ' .. token)
end

-- We leave the line (granted, or giving up): tell the waiter behind us, which
-- blocks on our wake list, to re-check (`word`: 'moved'; holds/chain.py sends
-- the same after popping its own hand-off from `first`). Always pushed: the one
-- behind may have left the queue too (granted in the same batch: readers, a
-- resize) and still block.
local function tell_next(wake, word)
  redis.call('DEL', wake)
  redis.call('LPUSH', wake, word)
  redis.call('PEXPIRE', wake, QUEUE_KEEP_MS)
end

-- Hand-off for the waiter first in line: "<fence> <token>" onto `first`.
local function push_first(first, token, fence)
  redis.call('RPUSH', first, int(fence) .. ' ' .. token)
  redis.call('PEXPIRE', first, QUEUE_KEEP_MS)
end

-- Wake a waiter that was granted: push its fencing token onto its wake list.
local function wake_waiter(e, fence)
  redis.call('LPUSH', e[4], int(fence))
  redis.call('PEXPIRE', e[4], tonumber(e[3]))
end
