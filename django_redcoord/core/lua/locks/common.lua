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
-- A released lock leaves a tombstone {false, fence, 0, 0, '', 0, '',
-- queue_until_ms} for FENCE_KEEP_MS so the next grant's fence is above the last
-- one even within one microsecond.
--
-- queue_until_ms also bounds every live place in the queue (a place taken or
-- renewed with a deadline past it pushes it out, with the queue's TTL), so a
-- record whose queue_until_ms is 0 or has passed says no live waiter can be
-- queued, and the free path and the release skip reading the queue. Without a
-- record (a grant that expired, a tombstone gone, data lost) nothing is known:
-- the queue is read, and a grant that finds it still there bounds it anew.
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
--
-- Redis full (maxmemory reached under noeviction): Redis refuses a script at its
-- first write that may take memory (SET, HSET, RPUSH...), and runs the rest of a
-- script whose first write took none (DEL, HDEL, PEXPIRE, LPOP...). So what gives
-- a hold up or keeps it (release, a hand-off, extend, unwinding a reentrant
-- level, leaving the queue) starts with a write that takes no memory and always
-- runs: a full Redis never leaves a lock held by nobody for its TTL. What takes a
-- new hold or place starts with one that takes memory: refused whole, an outage.
--
-- Waits, for the admin's chart of each lock name: every grant to a queued
-- waiter (a hand-off) adds how long it waited (server time from taking its
-- place to the grant) to the name's wait list, one entry a minute:
--   "<minute> <grants> <sum_ms> <max_ms>", newest first (numbers only)
-- minute: unix time // 60 s of the server's clock. The name's field in its
-- wait-index bucket (hash: name -> last minute with a wait) is written once a
-- minute, with the first wait of the minute. Both expire an hour after the
-- last wait; a grant that needed no wait writes neither.

-- A released lock's tombstone (its last fence) lives this long.
local FENCE_KEEP_MS = 60000

-- Minutes of waits a lock name keeps (the chart shows the last hour), and how
-- long its wait list and wait-index bucket live after the last wait (s).
local WAIT_KEEP = 61
local WAIT_TTL_S = 3720

-- Add one grant that waited `waited_ms` at server time `now_ms` to the name's
-- wait list (`waits`), registering the name in its bucket of the wait index
-- (`windex`) with the minute's first wait; that also drops one random entry
-- of the bucket whose last wait is over an hour old.
local function record_wait(waits, windex, name, now_ms, waited_ms)
  local minute = math.floor(now_ms / 60000)
  local head = redis.call('LINDEX', waits, 0)
  if head then
    local m, n, sum, max = string.match(head, '^(%d+) (%d+) (%d+) (%d+)$')
    if tonumber(m) == minute then
      redis.call('LSET', waits, 0, int(minute) .. ' ' .. int(n + 1) .. ' ' .. int(sum + waited_ms) .. ' '
        .. int(math.max(tonumber(max), waited_ms)))
      return
    end
  end
  redis.call('LPUSH', waits, int(minute) .. ' 1 ' .. int(waited_ms) .. ' ' .. int(waited_ms))
  redis.call('LTRIM', waits, 0, WAIT_KEEP - 1)
  redis.call('EXPIRE', waits, WAIT_TTL_S)
  local probe = redis.call('HRANDFIELD', windex, 1, 'WITHVALUES')
  if probe[2] and tonumber(probe[2]) < minute - 60 then
    redis.call('HDEL', windex, probe[1])
  end
  redis.call('HSET', windex, name, int(minute))
  redis.call('EXPIRE', windex, WAIT_TTL_S)
end

-- Push the index entry's bound out when the grant in `rec` (expiring at
-- rec[3]) would outlast it: to expiry + ttl, so a lock renewed or handed on
-- rewrites its entry about once per TTL. Updates rec[9].
local function keep_index(index, name, rec, ttl)
  if (tonumber(rec[9]) or 0) * 1000 < rec[3] then
    rec[9] = math.ceil((rec[3] + ttl) / 1000)
    redis.call('HSET', index, name, rec[9])
  end
end

-- Whether the queue may hold a live place, by the record `rec` (see
-- queue_until_ms above): `clock` (server time in us) is read only when the
-- record's bound is set.
local function queue_may_live(rec, clock)
  local until_ms = tonumber(rec[8])
  return until_ms == nil or (until_ms > 0 and until_ms * 1000 >= clock())
end

-- The lock record, or {false, last fence or 0} with no queue_until_ms: free.
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
-- `queue`: read when `rec` is no record (queue_until_ms unknown; see above).
local function write_grant(lock, queue, index, name, rec, token, ttl, now_us, host, pid, thread)
  local now_ms = math.floor(now_us / 1000)
  local fence = math.max((tonumber(rec[2]) or 0) + 1, now_us)
  local until_ms, left = tonumber(rec[8]), false
  if not until_ms then
    -- A chain of records starts: a queue left from before (its places, if any,
    -- were scanned just now) is kept for 2 x QUEUE_KEEP_MS and bounded so.
    until_ms = 0
    if redis.call('EXISTS', queue) == 1 then until_ms, left = now_ms + 2 * QUEUE_KEEP_MS, true end
  elseif until_ms < now_ms then
    until_ms = 0  -- every place it bounded is dead: the next one pushes the queue's TTL out
  end
  local new = {token, fence, now_ms + ttl, 1, host, pid, thread, until_ms, tonumber(rec[9]) or 0}
  -- A fresh grant's first write takes memory (HSET or SET), so a Redis that is full
  -- (maxmemory, noeviction) refuses the whole acquire as an outage; the queue's
  -- PEXPIRE, which takes none, comes after them (see "Redis full" above).
  keep_index(index, name, new, ttl)
  redis.call('SET', lock, cmsgpack.pack(new), 'PX', ttl)
  if left then redis.call('PEXPIRE', queue, 2 * QUEUE_KEEP_MS) end
  return new
end

-- Waking a queued waiter touches only declared keys: a waiter blocks on the
-- wake list of whoever is just ahead of it (the holder, or the live waiter
-- queued before it; see ahead_of), so the release that hands it the lock
-- pushes onto the releaser's OWN wake list, which the releaser names in its
-- KEYS. A waiter that leaves the queue pushes 'moved' onto its own wake list
-- for the one behind it (see leave_lock_queue). When a waiter ahead dies, the
-- one behind it finds out at its next re-check (within its wait chunk).

-- Hand the lock to the oldest live waiter and wake it with "<fence> <token>"
-- pushed onto `wake` (the releasing holder's own wake list, on which the head
-- blocks), unless the waiter is `caller` (it gets the reply instead), `wake`
-- is nil (no releaser to name: the head re-checks when the expired grant's
-- TTL runs out, or within its wait chunk), or the waiter's entry names
-- `process`, the releaser's own (then the element is returned second, and the
-- releaser hands it in-process: transport/nearby.py). Its wait goes to the
-- name's wait list (`waits`, `windex`: see record_wait). Returns the new
-- record, or nil when no live waiter is queued.
local function hand_off(lock, queue, index, waits, windex, name, rec, clock, caller, wake, process)
  if not queue_may_live(rec, clock) then return nil end
  local e = pop_live_waiter(queue, clock)
  if not e then return nil end
  local now_us = clock()
  local new = write_grant(lock, queue, index, name, rec, e[1], tonumber(e[3]), now_us, e[5], e[6], e[7])
  local here
  if wake and e[1] ~= caller then
    if process and e[10] == process then
      here = int(new[2]) .. ' ' .. e[1]
    else
      redis.call('LPUSH', wake, int(new[2]) .. ' ' .. e[1])
      redis.call('PEXPIRE', wake, tonumber(e[3]))
    end
  end
  local queued_ms = tonumber(e[9])
  if queued_ms then
    local now_ms = math.floor(now_us / 1000)
    record_wait(waits, windex, name, now_ms, math.max(0, now_ms - queued_ms))
  end
  return new, here
end

-- The owner token on whose wake list `token`, queued, blocks: the live waiter
-- just ahead of it, else `holder` (common/waiters.lua's waiter_ahead).
local function ahead_of(queue, token, holder, clock, last)
  return waiter_ahead(queue, token, clock, last, holder)
end

-- Give up our place (mode 'cancel'). The waiter queued just behind us blocks
-- on our wake list (`wake`): 'moved' makes it re-check and block on the list
-- of whoever is ahead of it now.
local function leave_lock_queue(queue, token, wake)
  local at, raw = find_waiter(queue, token)
  redis.call('DEL', wake)
  if at then
    redis.call('LREM', queue, 1, raw)
    if at < redis.call('LLEN', queue) then
      redis.call('LPUSH', wake, 'moved')
      redis.call('PEXPIRE', wake, QUEUE_KEEP_MS)
    end
  end
end

-- End the grant in `rec`: hand the lock to the oldest live waiter, else leave
-- a tombstone with the last fence and drop the index entry. Returns 2 when
-- handed off ({2, element} when to a waiter of `process`: see hand_off), 1
-- when freed (the index entry stays while the lock passes from hand to hand).
local function release_grant(lock, queue, index, waits, windex, name, rec, wake, process)
  local new, here = hand_off(lock, queue, index, waits, windex, name, rec, lazy_clock_us(), nil, wake, process)
  if here then return {2, here} end
  if new then return 2 end
  -- HDEL first: it takes no memory, so a full Redis runs the release to its end
  -- (see "Redis full" above).
  redis.call('HDEL', index, name)
  redis.call('SET', lock, cmsgpack.pack({false, rec[2], 0, 0, '', 0, '', tonumber(rec[8]) or 0}), 'PX', FENCE_KEEP_MS)
  return 1
end
