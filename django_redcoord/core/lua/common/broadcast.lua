-- common/broadcast.lua: waking every registered waiter at once (latches,
-- barriers, events, signals); prepended after common/time.lua.
--
-- A primitive's `waiters` zset holds the wake list of each waiter (a key of
-- the primitive's {name} hash tag, named by the Python key builder) scored by
-- the deadline of its registration (ms): a waiter renews it at every
-- re-check, so one that died is forgotten after its deadline. A broadcast
-- pushes a value onto the wake list of every live waiter; the waiter takes it
-- as a hint and re-reads the state (the truth) before returning.

-- Wake lists outlive a push by this long, in case their waiter is between
-- two calls (it finds the value at its next BLPOP).
local WAKE_KEEP_MS = 60000

local function watch(waiters, wake, deadline_ms)
  redis.call('ZADD', waiters, deadline_ms, wake)
end

local function unwatch(waiters, wake)
  redis.call('ZREM', waiters, wake)
  redis.call('DEL', wake)
end

-- Push `value` to every waiter registered until now or later; forget the
-- registrations. Returns how many were woken.
local function broadcast(waiters, value, now_ms)
  local live = redis.call('ZRANGEBYSCORE', waiters, now_ms, '+inf')
  for _, wake in ipairs(live) do
    redis.call('LPUSH', wake, value)
    redis.call('PEXPIRE', wake, WAKE_KEEP_MS)
  end
  redis.call('DEL', waiters)
  return #live
end
