-- signals/signal_wait.lua (common/time, common/waiters, common/broadcast,
-- signals/signal_common prepended): a waiter takes a signal sent to it, or
-- takes (or renews) its place in the signal's FIFO of waiters, or leaves it.
--
-- KEYS[1] queue       list: waiter entries, oldest first (common/waiters.lua)
-- KEYS[2] deliveries  hash: waiter token -> its signals not yet taken (signal_common.lua)
-- KEYS[3] due         zset: waiter token -> when its deliveries are forgotten (ms)
-- KEYS[4] wake        stream: the waiters' wake-ups (common/broadcast.lua)
-- KEYS[5] index       hash (shared): signal name -> a bound on when it was last used (s)
-- KEYS[6] probe    never written: refuses the script whole while its slot migrates (common/broadcast.lua)
-- ARGV[1] token, ARGV[2] mode ('queue' first call, 'wait' renew, 'cancel' leave
--         and take a signal that came meanwhile, 'leave' leave only, the caller
--         interrupted: signals sent to it that it never took go on to the next
--         live waiters, one each, or, when none waits, to the next waiter to come)
-- ARGV[3] lease_ms, ARGV[4] name, ARGV[5] host, ARGV[6] pid, ARGV[7] thread
-- ARGV[8] taken    the id of the signal the caller's last call returned (it got
--                  it: forget it), or ''
--
-- Returns {id, payload, mark}: the caller's oldest signal (its wait ends;
-- its next call names `id`), or {'', '', mark}: none, block reading the
-- wake stream after entry `mark` (after 'queue'/'wait').

do local refused = keys_moving() if refused then return refused end end
local queue, deliveries, due, wake, index = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local token, mode, lease = ARGV[1], ARGV[2], tonumber(ARGV[3])
local now_ms = server_now_ms()

prune_deliveries(deliveries, due, now_ms)
local mine = deliveries_of(deliveries, token)
if mine[1] or mode == 'cancel' or mode == 'leave' then
  -- taking a signal sent to us, or leaving: runs on a full Redis too (see common/time.lua)
  run_when_full(queue)
end
if ARGV[8] ~= '' and mine[1] and mine[1][1] == ARGV[8] then
  table.remove(mine, 1)
  keep_deliveries(deliveries, due, token, mine, now_ms)
end
if not mine[1] and mode ~= 'leave' then
  -- None sent to us: the oldest signal a waiter interrupted before taking it passed on
  -- while nobody else waited (ORPHANS, see below) is ours.
  local orphans = deliveries_of(deliveries, ORPHANS)
  if orphans[1] then
    table.insert(mine, table.remove(orphans, 1))
    keep_deliveries(deliveries, due, ORPHANS, orphans, now_ms)
  end
end
local got = mine[1]
if mode == 'leave' then got = nil end
if got then keep_deliveries(deliveries, due, token, mine, now_ms) end
if got or mode == 'cancel' or mode == 'leave' then
  local at, raw = find_waiter(queue, token)
  if at then redis.call('LREM', queue, 1, raw) end
  if got then return {got[1], got[2], ''} end
  if mode == 'leave' and mine[1] then
    -- We were sent signals and never took them (cancelled as they came): a send()
    -- counted them delivered, so each goes to the next live waiter, as send() does.
    local clock, to, moved = lazy_clock_us(), nil, 0
    while mine[1] do
      local e = pop_live_waiter(queue, clock)
      if not e then break end
      local list = deliveries_of(deliveries, e[1])
      table.insert(list, table.remove(mine, 1))
      keep_deliveries(deliveries, due, e[1], list, now_ms)
      to, moved = (moved == 0) and e[1] or '*', moved + 1
    end
    if mine[1] then
      -- nobody waits now: the next waiter to come takes them (within WAKE_KEEP_MS)
      local orphans = deliveries_of(deliveries, ORPHANS)
      for _, d in ipairs(mine) do table.insert(orphans, d) end
      keep_deliveries(deliveries, due, ORPHANS, orphans, now_ms)
      keep_deliveries(deliveries, due, token, {}, now_ms)
    else
      keep_deliveries(deliveries, due, token, mine, now_ms)
    end
    if moved > 0 then wake_up(wake, 's', to) end
  end
  return {'', '', ''}
end
local deadline = now_ms + math.min(lease, QUEUE_KEEP_MS)
place_waiter(queue, token, {token, deadline, 0, '', ARGV[5], tonumber(ARGV[6]) or 0, ARGV[7]}, mode, now_ms)
redis.call('PEXPIRE', queue, 2 * QUEUE_KEEP_MS)
index_put(index, ARGV[4], math.ceil((now_ms + 2 * QUEUE_KEEP_MS) / 1000), now_ms)
return {'', '', wake_mark(wake)}
