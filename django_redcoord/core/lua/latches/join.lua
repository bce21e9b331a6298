-- latches/join.lua (common/time, common/broadcast, latches/common prepended):
-- a party joins the latch: it will count down, and renews a lease until then.
-- Follows the hold contract (see core/holds/steps.py).
--
-- KEYS[1] state, KEYS[2] parties, KEYS[3] waiters, KEYS[4] index (see latches/common.lua)
-- KEYS[5] wake     stream: the waiters' wake-ups (a break wakes them; common/broadcast.lua)
-- KEYS[6] probe    never written: refuses the script whole while its slot migrates (common/broadcast.lua)
-- ARGV[1] token, ARGV[2] ttl_ms (the lease), ARGV[5] name,
-- ARGV[3] mode     'cancel': give up a join that was interrupted or is in doubt:
--                  leave without counting down (the party never started its
--                  work) and never join; any other mode joins (joining never
--                  waits)
-- ARGV[4] lease_ms (unused),
--         ARGV[6] reentrant (unused), ARGV[7] host, ARGV[8] pid, ARGV[9] thread
-- ARGV[10] count   the latch's initial count (used on first use)
-- ARGV[11] keep_ms how long the latch's keys live after this call
--
-- Returns {1, fence, 1} joined, {0, -1} broken, {0, -2} already open,
--         {0, -3} left ('cancel': whether or not the party had joined).

do local refused = keys_moving() if refused then return refused end end
local state, parties, waiters, index, wake = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local token, ttl, name = ARGV[1], tonumber(ARGV[2]), ARGV[5]
if ARGV[3] == 'cancel' then
  -- (ZREM first: it takes no memory, so a full Redis lets a party leave)
  if redis.call('ZREM', parties, token) == 1 then redis.call('HDEL', state, 'p:' .. token) end
  return {0, -3}
end
local now_us = lazy_clock_us()()
local now_ms = math.floor(now_us / 1000)

prune_parties(state, parties, waiters, wake, now_ms)
local count, broken = latch_state(state, ARGV[10])
latch_keep(state, parties, waiters, index, name, tonumber(ARGV[11]), now_ms)
if broken then return {0, -1} end
if count <= 0 then return {0, -2} end
local fence = math.max((tonumber(redis.call('HGET', state, 'fence')) or 0) + 1, now_us)
redis.call('ZADD', parties, now_ms + ttl, token)
redis.call('HSET', state, 'fence', int(fence),
           'p:' .. token, cmsgpack.pack({token, fence, now_ms + ttl, ARGV[7], tonumber(ARGV[8]) or 0, ARGV[9]}))
return {1, fence, 1}
