-- latches/count_down.lua (common/time, common/broadcast, latches/common
-- prepended): count down by one; at zero the latch opens and every waiter is
-- woken. Follows the hold contract's release (a party counting down leaves).
--
-- KEYS[1] state, KEYS[2] parties, KEYS[3] waiters, KEYS[4] index
-- KEYS[5] wake     stream: the waiters' wake-ups (common/broadcast.lua)
-- KEYS[6] probe    never written: refuses the script whole while its slot migrates (common/broadcast.lua)
-- ARGV[1] token    the party's token, or '' for a count-down by anyone
-- ARGV[2] name     the latch's name
-- ARGV[3] count    the initial count (used on first use)
-- ARGV[4] keep_ms  how long the latch's keys live after this call
--
-- Returns 0 the party's lease had run out (the latch is broken, or, when its
-- entry is gone altogether, Redis lost the latch's data: then it breaks now),
-- 1 counted down, 2 counted down and opened, 4 broken (nothing counted),
-- 5 already open.

do local refused = keys_moving() if refused then return refused end end
local state, parties, waiters, index, wake = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local token, name = ARGV[1], ARGV[2]
local now_ms = server_now_ms()

if token ~= '' then
  local score = redis.call('ZSCORE', parties, token)
  if not score then
    -- A party leaves its entry only by counting down or giving up (once):
    -- gone, Redis lost the latch's data since this party joined.
    latch_state(state, ARGV[3])
    latch_break(state, waiters, wake, LATCH_LOST, now_ms)
    latch_keep(state, parties, waiters, index, name, tonumber(ARGV[4]), now_ms)
    return 0
  end
  if tonumber(score) < now_ms then
    prune_parties(state, parties, waiters, wake, now_ms)
    return 0
  end
  if redis.call('HEXISTS', state, 'p:' .. token) == 0 then
    -- Our entry is here and our record is not: Redis lost the state alone (evicted
    -- without the parties set), and with it the count-downs made so far.
    latch_state(state, ARGV[3])
    latch_break(state, waiters, wake, LATCH_LOST, now_ms)
    latch_keep(state, parties, waiters, index, name, tonumber(ARGV[4]), now_ms)
    return 0
  end
  redis.call('ZREM', parties, token)
  redis.call('HDEL', state, 'p:' .. token)
  redis.call('HSET', state, 'd:' .. token, 1)  -- its tombstone (see renew.lua)
end
prune_parties(state, parties, waiters, wake, now_ms)
local count, broken = latch_state(state, ARGV[3])
latch_keep(state, parties, waiters, index, name, tonumber(ARGV[4]), now_ms)
if broken then return 4 end
if count <= 0 then return 5 end
count = redis.call('HINCRBY', state, 'count', -1)
if count <= 0 then
  broadcast(waiters, wake, 'open', now_ms)
  return 2
end
return 1
