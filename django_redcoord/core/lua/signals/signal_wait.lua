-- signals/signal_wait.lua (common/time, common/waiters prepended): a waiter
-- takes (or renews) its place in the signal's FIFO of waiters, or leaves it;
-- and settles what its last move from its wake list left in flight.
--
-- KEYS[1] queue    list: waiter entries, oldest first (common/waiters.lua)
-- KEYS[2] wake     the caller's wake list: signals are pushed onto it and wait
--                  there (across reconnects) until it takes them
-- KEYS[3] inflight the caller's in-flight list: a signal moves here from the
--                  wake list as it is taken (BLMOVE), and stays until the
--                  caller says it got it, so a reply lost to a dropped
--                  connection loses nothing
-- KEYS[4] index    hash (shared): signal name -> a bound on when it was last used (s)
-- ARGV[1] token, ARGV[2] mode ('queue' first call, 'wait' renew, 'cancel' leave
--         and take a signal that came meanwhile, 'leave' leave only: signals
--         stay on the wake list for the next wait)
-- ARGV[3] lease_ms, ARGV[4] name, ARGV[5] host, ARGV[6] pid, ARGV[7] thread
-- ARGV[8] inflight 'done' the caller got the signal it moved: forget it;
--                  'recover' its last move may have been lost: return it;
--                  '' nothing to settle
--
-- Returns {n, recovered}: signals waiting on the caller's wake list, and the
-- in-flight signal to deliver now (or false). After 'cancel', a signal that
-- came meanwhile is moved in flight and returned as `recovered`.

local queue, wake, inflight, index = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local token, mode, lease = ARGV[1], ARGV[2], tonumber(ARGV[3])
local now_ms = server_now_ms()

if ARGV[8] == 'done' then redis.call('DEL', inflight) end
local recovered = false
if ARGV[8] == 'recover' then recovered = redis.call('LINDEX', inflight, 0) end
if mode == 'cancel' or mode == 'leave' then
  local at, raw = find_waiter(queue, token)
  if at then redis.call('LREM', queue, 1, raw) end
  if mode == 'cancel' and not recovered then
    recovered = redis.call('LMOVE', wake, inflight, 'LEFT', 'RIGHT')
    if recovered then redis.call('PEXPIRE', inflight, WAKE_KEEP_MS) end
  end
  return {redis.call('LLEN', wake), recovered}
end
if not recovered then
  local deadline = now_ms + math.min(lease, QUEUE_KEEP_MS)
  place_waiter(queue, token, {token, deadline, 0, wake, ARGV[5], tonumber(ARGV[6]) or 0, ARGV[7]}, mode, now_ms)
  redis.call('PEXPIRE', queue, 2 * QUEUE_KEEP_MS)
  redis.call('HSET', index, ARGV[4], math.ceil((now_ms + 2 * QUEUE_KEEP_MS) / 1000))
end
return {redis.call('LLEN', wake), recovered}
