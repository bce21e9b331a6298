-- latches/barrier_arrive.lua (common/time, common/broadcast, latches/barrier_common
-- prepended): a party arrives at the barrier; the last one trips it.
--
-- KEYS[1] state, KEYS[2] parties, KEYS[3] index (see latches/barrier_common.lua)
-- KEYS[4] wake     stream: the arrived parties' wake-ups (common/broadcast.lua)
-- KEYS[5] probe    never written: refuses the script whole while its slot migrates (common/broadcast.lua)
-- ARGV[1] token    the caller's token for this wait
-- ARGV[2] parties  how many parties trip the barrier
-- ARGV[3] lease_ms how long the arrival stays without a re-check
-- ARGV[4] host, ARGV[5] pid, ARGV[6] thread: for the admin and the reasons
-- ARGV[7] name, ARGV[8] keep_ms
--
-- Returns {1, index, gen} tripped by this arrival (index: parties - 1),
--         {0, index, gen, ms until the earliest arrival's lease runs out, epoch, mark}
--         waiting (block reading the wake stream after entry `mark`),
--         {-1, why} broken.

do local refused = keys_moving() if refused then return refused end end
local state, parties, index, wake = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local token, n = ARGV[1], tonumber(ARGV[2])
local now_ms = server_now_ms()

local epoch, created = barrier_epoch(state)
if created and redis.call('ZCARD', parties) > 0 then
  -- Arrivals are waiting, but their state is gone (evicted alone, without the
  -- parties set): nobody can tell who arrived, and counting them would let this
  -- party pass with parties that are about to learn the loss. It breaks.
  barrier_break(state, parties, wake, BARRIER_LOST)
end
barrier_keep(state, parties, index, ARGV[7], tonumber(ARGV[8]), now_ms)
prune_arrived(state, parties, wake, now_ms)
local m = redis.call('HMGET', state, 'gen', 'broken')
local gen = tonumber(m[1]) or 0
if m[2] then return {-1, m[2]} end
redis.call('ZADD', parties, now_ms + tonumber(ARGV[3]), token)
redis.call('HSET', state, 'a:' .. token, cmsgpack.pack({token, ARGV[4], ARGV[5], ARGV[6]}))
local arrived = redis.call('ZCOUNT', parties, now_ms, '+inf')  -- lapsed arrivals broke it above
if arrived >= n then
  redis.call('HSET', state, 'gen', gen + 1)
  wake_arrived(state, parties, wake, 'tripped')
  return {1, arrived - 1, gen}
end
return {0, arrived - 1, gen, next_arrival_expiry(parties, now_ms), epoch, wake_mark(wake)}
