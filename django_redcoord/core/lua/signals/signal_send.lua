-- signals/signal_send.lua (common/time, common/waiters prepended): deliver a
-- signal to the oldest live waiter ('one') or to every live waiter ('all').
--
-- KEYS[1] queue    list: waiter entries, oldest first (see signal_wait.lua)
-- ARGV[1] how      'one' or 'all'
-- ARGV[2] payload  what the waiters get ('m:' + JSON)
--
-- Returns how many waiters got it. A waiter removed from the queue this way
-- takes its place again on its next wait (it is between two waits).

local queue = KEYS[1]
local clock = lazy_clock_us()
local sent = 0
while true do
  local e = pop_live_waiter(queue, clock)
  if not e then break end
  redis.call('RPUSH', e[4], ARGV[2])
  redis.call('PEXPIRE', e[4], WAKE_KEEP_MS)
  sent = sent + 1
  if ARGV[1] == 'one' then break end
end
return sent
