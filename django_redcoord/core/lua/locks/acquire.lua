-- locks/acquire.lua (common/time.lua, common/waiters.lua, locks/common.lua prepended): try to take a
-- lock; optionally queue for it (FIFO).
--
-- KEYS[1] lock     string: the lock record (see locks/common.lua)
-- KEYS[2] queue    list: waiter entries, oldest first (see locks/common.lua)
-- KEYS[3] index    hash (the name's live-lock index bucket): name -> expiry bound
-- KEYS[4] waits    list: the name's waits per minute (see locks/common.lua)
-- KEYS[5] windex   hash (the name's wait-index bucket): name -> last minute with a wait
-- KEYS[6] wake     list: the caller's own wake list (the waiter queued behind
--                  it blocks on it; see locks/common.lua)
-- ARGV[1] token    the caller's owner token
-- ARGV[2] ttl_ms   lock time-to-live, milliseconds
-- ARGV[3] mode     'try'    take it if free and nobody is queued; never queue
--                  'queue'  as 'try', else join the queue (first call of a wait)
--                  'wait'   re-check from the waiting loop: renew our place, or
--                           take a new one if it lapsed (idempotent; no nesting)
--                  'cancel' give up: leave the queue unless already granted
-- ARGV[4] lease_ms how long the caller's place stays valid without another
--                  call (capped at QUEUE_KEEP_MS, common/waiters.lua)
-- ARGV[5] name     the lock's name (field of the index bucket)
-- ARGV[6] reentrant '1' if the same token nests (depth + 1), else '0'
-- ARGV[7] host, ARGV[8] pid, ARGV[9] thread: holder metadata for the admin page
-- ARGV[10] process  the caller's process id (random, per process; optional),
--                  kept in its queue entry: a release by a hold of the same
--                  process hands the lock to it in-process (see hand_off)
--
-- Returns {1, fence, depth}      when the caller holds the lock,
--         {0, pttl_ms}            when not (mode 'try' or 'cancel'; pttl_ms:
--                                 time left on the current holder's grant),
--         {0, pttl_ms, ahead}     when queued (modes 'queue' and 'wait'): block
--                                 on the wake list of owner token `ahead` (the
--                                 holder, or the live waiter just ahead).

local lock, queue, index, waits, windex, wake = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]
local token, ttl, mode, lease, name = ARGV[1], tonumber(ARGV[2]), ARGV[3], tonumber(ARGV[4]), ARGV[5]
local host, pid, thread, process = ARGV[7], tonumber(ARGV[8]) or 0, ARGV[9], ARGV[10]
local queued_before = mode == 'wait' or mode == 'cancel'
local PRUNE_EVERY, PRUNE_PROBE = 8, 16

local clock = lazy_clock_us()
local rec = read_lock(lock)

if rec[1] == token then
  -- Ours already: handed to us while we were not blocked, a retry of an
  -- acquire whose reply was lost (idempotent), or reentrant nesting.
  local depth = tonumber(rec[4]) or 1
  local nest = ARGV[6] == '1' and (mode == 'try' or mode == 'queue')
  if nest then depth = depth + 1 end
  -- (the DEL first: a full Redis still lets a waiter take what was handed to it;
  -- see "Redis full" in locks/common.lua)
  if queued_before then redis.call('DEL', wake) end
  local pttl = redis.call('PTTL', lock)
  if pttl < ttl then
    rec[3], rec[4] = math.floor(clock() / 1000) + ttl, depth
    keep_index(index, name, rec, ttl)
    redis.call('SET', lock, cmsgpack.pack(rec), 'PX', ttl)
  elseif nest then
    rec[4] = depth
    redis.call('SET', lock, cmsgpack.pack(rec), 'KEEPTTL')
  end
  return {1, rec[2], depth}
end

if not rec[1] then
  -- Free. Waiters queued before us go first: a lock that expired under its
  -- holder (crash) is handed to the oldest live waiter right here.
  local new = hand_off(lock, queue, index, waits, windex, name, rec, clock, token, nil)
  if new then
    if new[1] == token then
      -- We were the oldest live waiter: ours, no wake-up needed.
      redis.call('DEL', wake)
      return {1, new[2], 1}
    end
    rec = new
  else
    if queued_before then redis.call('DEL', wake) end
    -- One fresh grant in PRUNE_EVERY drops the certainly dead entries (holders
    -- that crashed, or let a grant run out without releasing it) among
    -- PRUNE_PROBE random ones of our bucket (common/index.lua): two looked at
    -- per fresh grant on average, more than even a holder that never releases
    -- leaves behind, so a bucket holds about its live locks (dead entries are
    -- skipped by their readers meanwhile).
    if clock() % PRUNE_EVERY == 0 then
      index_prune(index, math.floor(clock() / 1000), PRUNE_PROBE)
    end
    new = write_grant(lock, queue, index, name, rec, token, ttl, clock(), host, pid, thread)
    return {1, new[2], 1}
  end
end

-- Held by someone else.
-- (0 tells the caller nobody's lease bounds its wait: a lease with under a
-- millisecond left, which PTTL rounds to 0, is 1)
local pttl = redis.call('PTTL', lock)
if pttl < 0 then pttl = 0 elseif pttl == 0 then pttl = 1 end
if mode == 'cancel' then
  leave_lock_queue(queue, token, wake)
elseif mode ~= 'try' then
  -- Server time without TIME: the holder's grant runs out at rec[3], in pttl.
  local now_ms = tonumber(rec[3]) - pttl
  local deadline = now_ms + math.min(lease, QUEUE_KEEP_MS)
  local length = place_waiter(queue, token, {token, deadline, ttl, wake, host, pid, thread, '', 0, process}, mode, now_ms)
  -- The queue outlives every live place in it: its TTL is pushed out to
  -- 2 x QUEUE_KEEP_MS when it was created or when the record says it may end
  -- before this place does (recorded, so not on every enqueue).
  if length == 1 or (tonumber(rec[8]) or 0) < deadline then
    redis.call('PEXPIRE', queue, 2 * QUEUE_KEEP_MS)
    rec[8] = now_ms + 2 * QUEUE_KEEP_MS
    redis.call('SET', lock, cmsgpack.pack(rec), 'KEEPTTL')
  end
  return {0, pttl, ahead_of(queue, token, rec[1], clock, length ~= nil)}
end
return {0, pttl}
