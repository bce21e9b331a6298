-- signals/signal_send.lua (common/time, common/waiters, common/broadcast,
-- signals/signal_common prepended): deliver a signal to the oldest live
-- waiter ('one') or to every live waiter ('all'), and wake them.
--
-- KEYS[1] queue       list: waiter entries, oldest first (common/waiters.lua)
-- KEYS[2] deliveries  hash: waiter token -> its signals not yet taken (signal_common.lua)
-- KEYS[3] due         zset: waiter token -> when its deliveries are forgotten (ms)
-- KEYS[4] wake        stream: the waiters' wake-ups (common/broadcast.lua)
-- KEYS[5] probe    never written: refuses the script whole while its slot migrates (common/broadcast.lua)
-- ARGV[1] how         'one' or 'all'
-- ARGV[2] payload     what the waiters get ('m:' + JSON)
--
-- Returns how many waiters got it. A waiter removed from the queue this way
-- takes its place again on its next wait (it is between two waits).

do local refused = keys_moving() if refused then return refused end end
local queue, deliveries, due, wake = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local clock = lazy_clock_us()
local now_us = clock()
local now_ms = math.floor(now_us / 1000)
prune_deliveries(deliveries, due, now_ms)
local sent, to = 0, '*'
while true do
  local e = pop_live_waiter(queue, clock)
  if not e then break end
  local list = deliveries_of(deliveries, e[1])
  sent = sent + 1
  table.insert(list, {int(now_us) .. '-' .. sent, ARGV[2]})
  keep_deliveries(deliveries, due, e[1], list, now_ms)
  if ARGV[1] == 'one' then
    to = e[1]
    break
  end
end
if sent > 0 then wake_up(wake, 's', to) end
return sent
