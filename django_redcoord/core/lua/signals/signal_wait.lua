-- signals/signal_wait.lua (common/time, common/waiters prepended): a waiter
-- takes (or renews) its place in the signal's FIFO of waiters, or leaves it.
--
-- KEYS[1] queue    list: waiter entries, oldest first (common/waiters.lua)
-- KEYS[2] wake     the caller's wake list: signals are pushed onto it and wait
--                  there (across reconnects) until it takes them
-- KEYS[3] index    hash (shared): signal name -> a bound on when it was last used (s)
-- ARGV[1] token, ARGV[2] mode ('queue' first call, 'wait' renew, 'cancel' leave)
-- ARGV[3] lease_ms, ARGV[4] name, ARGV[5] host, ARGV[6] pid, ARGV[7] thread
--
-- Returns {n}: signals already waiting on the caller's wake list.

local queue, wake, index = KEYS[1], KEYS[2], KEYS[3]
local token, mode, lease = ARGV[1], ARGV[2], tonumber(ARGV[3])
local now_ms = server_now_ms()
if mode == 'cancel' then
  local at, raw = find_waiter(queue, token)
  if at then redis.call('LREM', queue, 1, raw) end
  return {redis.call('LLEN', wake)}
end
local deadline = now_ms + math.min(lease, QUEUE_KEEP_MS)
place_waiter(queue, token, cmsgpack.pack({token, deadline, 0, wake, ARGV[5], tonumber(ARGV[6]) or 0, ARGV[7]}), mode)
redis.call('PEXPIRE', queue, 2 * QUEUE_KEEP_MS)
redis.call('HSET', index, ARGV[4], math.ceil((now_ms + 2 * QUEUE_KEEP_MS) / 1000))
return {redis.call('LLEN', wake)}
