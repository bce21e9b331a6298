-- latches/barrier_check.lua (common/time, common/broadcast, latches/barrier_common
-- prepended): an arrived party re-checks while it waits (renewing its lease),
-- or gives up.
--
-- KEYS[1] state, KEYS[2] parties (see latches/barrier_common.lua)
-- KEYS[3] wake     stream: the arrived parties' wake-ups (common/broadcast.lua)
-- KEYS[4] probe    never written: refuses the script whole while its slot migrates (common/broadcast.lua)
-- KEYS[5] index    hash (shared): barrier name -> a bound on when it was last used (s)
-- ARGV[1] token, ARGV[2] gen (the generation it arrived in; '' unknown: the
--         party was interrupted while arriving, with ARGV[3] 'cancel')
-- ARGV[3] mode     'wait' renew, 'timeout' or 'cancel' give up: that breaks the
--                  barrier (the others can never trip it now), as
--                  threading.Barrier does
-- ARGV[4] lease_ms
-- ARGV[5] epoch    the barrier's epoch when the party arrived: another one (or
--                  none) now means Redis lost the barrier's data meanwhile
-- ARGV[6] keep_ms  how long the barrier lives after its last use: a renewal is a use (a
--                  party may wait longer than keep_ms)
-- ARGV[7] name     the barrier's name (its index entry)
--
-- Returns {1} tripped, {-1, why} broken, {0, ms until the earliest arrival's
-- lease runs out, mark} still waiting (block reading the wake stream after
-- entry `mark`).

do local refused = keys_moving() if refused then return refused end end
local state, parties, wake = KEYS[1], KEYS[2], KEYS[3]
local token, gen, mode, epoch_seen = ARGV[1], tonumber(ARGV[2]), ARGV[3], ARGV[5]
local now_ms = server_now_ms()

local m = redis.call('HMGET', state, 'gen', 'broken', 'broken_gen', 'reset_gen', 'epoch')
if ARGV[2] == '' then
  -- Interrupted while arriving: the arrival's outcome is unknown. Recorded and
  -- still waiting, it is undone (which breaks the barrier, below); not
  -- recorded, or already tripped, there is nothing to undo.
  if not redis.call('ZSCORE', parties, token) then
    return {-1, 'this party had not arrived'}
  end
  gen, epoch_seen = tonumber(m[1]) or 0, m[5]
end
if m[5] ~= epoch_seen then
  -- Our arrival (and maybe others) went with the data: nobody can tell who
  -- arrived, so the barrier breaks (in its new epoch, for the parties that
  -- arrived since) until reset().
  local epoch = barrier_epoch(state)
  redis.call('PEXPIRE', state, tonumber(ARGV[6]))
  redis.call('PEXPIRE', parties, tonumber(ARGV[6]))
  redis.call('ZREM', parties, token)
  redis.call('HDEL', state, 'a:' .. token)
  if not m[2] then barrier_break(state, parties, wake, BARRIER_LOST) end
  return {-1, redis.call('HGET', state, 'broken') or BARRIER_LOST}
end
local now_gen = tonumber(m[1]) or 0
if tonumber(m[4] or '-1') == gen then
  return {-1, 'the barrier was reset'}
end
if now_gen > gen then
  return {1}
end
if m[2] and tonumber(m[3] or '-1') == gen then
  return {-1, m[2]}
end
if mode ~= 'wait' then
  redis.call('ZREM', parties, token)
  redis.call('HDEL', state, 'a:' .. token)
  barrier_break(state, parties, wake, mode == 'timeout' and 'a party timed out waiting' or 'a party stopped waiting')
  return {-1, redis.call('HGET', state, 'broken')}
end
if not redis.call('ZSCORE', parties, token) then
  -- Our arrival lapsed (we were paused past our lease): the barrier broke.
  prune_arrived(state, parties, wake, now_ms)
  barrier_break(state, parties, wake, 'a party stopped renewing its lease while waiting')
  return {-1, redis.call('HGET', state, 'broken')}
end
prune_arrived(state, parties, wake, now_ms)
m = redis.call('HMGET', state, 'broken', 'broken_gen')
if m[1] and tonumber(m[2] or '-1') == gen then
  return {-1, m[1]}
end
run_when_full(parties)  -- (a renewal: see common/time.lua)
redis.call('ZADD', parties, 'XX', now_ms + tonumber(ARGV[4]), token)
-- (a wait longer than keep_ms must not see its barrier expire under it as if Redis had lost it)
barrier_keep(state, parties, KEYS[5], ARGV[7], tonumber(ARGV[6]), now_ms)
return {0, next_arrival_expiry(parties, now_ms), wake_mark(wake)}
