-- latches/barrier_check.lua (common/time, common/broadcast, latches/barrier_common
-- prepended): an arrived party re-checks while it waits (renewing its lease),
-- or gives up.
--
-- KEYS[1] state, KEYS[2] parties (see latches/barrier_common.lua)
-- KEYS[3] wake     the caller's wake list
-- ARGV[1] token, ARGV[2] gen (the generation it arrived in)
-- ARGV[3] mode     'wait' renew, 'timeout' or 'cancel' give up: that breaks the
--                  barrier (the others can never trip it now), as
--                  threading.Barrier does
-- ARGV[4] lease_ms
--
-- Returns {1} tripped, {-1, why} broken, {0, ms until the earliest arrival's
-- lease runs out} still waiting.

local state, parties, wake = KEYS[1], KEYS[2], KEYS[3]
local token, gen, mode = ARGV[1], tonumber(ARGV[2]), ARGV[3]
local now_ms = server_now_ms()

local m = redis.call('HMGET', state, 'gen', 'broken', 'broken_gen', 'reset_gen')
local now_gen = tonumber(m[1]) or 0
if tonumber(m[4] or '-1') == gen then
  redis.call('DEL', wake)
  return {-1, 'the barrier was reset'}
end
if now_gen > gen then
  redis.call('DEL', wake)
  return {1}
end
if m[2] and tonumber(m[3] or '-1') == gen then
  redis.call('DEL', wake)
  return {-1, m[2]}
end
if mode ~= 'wait' then
  redis.call('ZREM', parties, token)
  redis.call('HDEL', state, 'a:' .. token)
  redis.call('DEL', wake)
  barrier_break(state, parties, mode == 'timeout' and 'a party timed out waiting' or 'a party stopped waiting')
  return {-1, redis.call('HGET', state, 'broken')}
end
if not redis.call('ZSCORE', parties, token) then
  -- Our arrival lapsed (we were paused past our lease): the barrier broke.
  prune_arrived(state, parties, now_ms)
  barrier_break(state, parties, 'a party stopped renewing its lease while waiting')
  return {-1, redis.call('HGET', state, 'broken')}
end
prune_arrived(state, parties, now_ms)
m = redis.call('HMGET', state, 'broken', 'broken_gen')
if m[1] and tonumber(m[2] or '-1') == gen then
  redis.call('DEL', wake)
  return {-1, m[1]}
end
redis.call('ZADD', parties, 'XX', now_ms + tonumber(ARGV[4]), token)
return {0, next_arrival_expiry(parties, now_ms)}
