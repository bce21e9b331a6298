-- common/broadcast.lua: waking every waiter of a primitive at once (latches,
-- barriers, events, signals); prepended after common/time.lua.
--
-- A primitive has one wake stream (a key of its {name} hash tag, named by the
-- Python key builder and declared in KEYS by every script that touches it).
-- A waiter's look returns the id of the stream's last entry (wake_mark); the
-- waiter then blocks reading the stream after that id (XREAD BLOCK), so an
-- entry added after its look (however soon) ends its wait at once, and one
-- entry wakes every waiter (nothing is consumed: no waiter can take another's
-- wake-up). The waiter takes it as a hint and looks at the state (the truth)
-- again.
--
-- The `waiters` zset (events, latches) counts the waiters: a waiter's token
-- scored by the deadline of its registration (ms); a waiter renews it at every
-- look, so one that died is forgotten after its deadline.

-- The wake stream outlives its last entry by this long; it keeps about
-- WAKE_KEEP_ENTRIES entries (a waiter reads the few added since its look).
local WAKE_KEEP_MS = 60000
local WAKE_KEEP_ENTRIES = 64

-- While a Cluster slot migrates, a node runs a script only if every key it
-- declared is there, and a key the script then deletes and touches again, or
-- creates, aborts it at that command ("non local key": what ran before stays
-- written). So every script here that writes declares, last, the primitive's
-- probe key, which is never written: while the slot migrates the node refuses
-- the script before it runs (TRYAGAIN; the caller tries again, then reports
-- an outage), never half of it. keys_moving() checks it again from inside
-- (for a server that would not): returns the refusal to return, or nil.
local function keys_moving()
  local r = redis.pcall('EXISTS', KEYS[#KEYS])
  if type(r) == 'table' and r.err then
    return redis.error_reply('TRYAGAIN the slot of ' .. KEYS[#KEYS] .. ' is moving: ' .. tostring(r.err))
  end
  return nil
end

local function watch(waiters, token, deadline_ms)
  redis.call('ZADD', waiters, deadline_ms, token)
end

local function unwatch(waiters, token)
  redis.call('ZREM', waiters, token)
end

-- The id of the wake stream's last entry ('0-0' when it has none): a waiter
-- blocks reading what comes after it.
local function wake_mark(wake)
  local last = redis.call('XREVRANGE', wake, '+', '-', 'COUNT', 1)
  if last[1] then return last[1][1] end
  return '0-0'
end

-- Add a wake-up for `to` ('*': every waiter) saying `value` (a hint).
local function wake_up(wake, value, to)
  redis.call('XADD', wake, 'MAXLEN', '~', WAKE_KEEP_ENTRIES, '*', 't', to or '*', 'v', value)
  redis.call('PEXPIRE', wake, WAKE_KEEP_MS)
end

-- Wake every waiter (registered or about to block) with `value`; forget the
-- registrations. Returns how many were registered and live.
local function broadcast(waiters, wake, value, now_ms)
  local live = redis.call('ZCOUNT', waiters, now_ms, '+inf')
  redis.call('DEL', waiters)
  wake_up(wake, value, '*')
  return live
end
