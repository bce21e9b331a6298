-- latches/count_down.lua (common/time, common/broadcast, latches/common
-- prepended): count down by one; at zero the latch opens and every waiter is
-- woken. Follows the hold contract's release (a party counting down leaves).
--
-- KEYS[1] state, KEYS[2] parties, KEYS[3] waiters, KEYS[4] index
-- ARGV[1] token    the party's token, or '' for a count-down by anyone
-- ARGV[2] name     the latch's name
-- ARGV[3] count    the initial count (used on first use)
-- ARGV[4] keep_ms  how long the latch's keys live after this call
--
-- Returns 0 the party's lease had run out (the latch is broken), 1 counted
-- down, 2 counted down and opened, 4 broken (nothing counted), 5 already open.

local state, parties, waiters, index = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local token, name = ARGV[1], ARGV[2]
local now_ms = server_now_ms()

if token ~= '' then
  local score = redis.call('ZSCORE', parties, token)
  if not score or tonumber(score) < now_ms then
    prune_parties(state, parties, waiters, now_ms)
    return 0
  end
  redis.call('ZREM', parties, token)
  redis.call('HDEL', state, 'p:' .. token)
end
prune_parties(state, parties, waiters, now_ms)
local count, broken = latch_state(state, ARGV[3])
latch_keep(state, parties, waiters, index, name, tonumber(ARGV[4]), now_ms)
if broken then return 4 end
if count <= 0 then return 5 end
count = redis.call('HINCRBY', state, 'count', -1)
if count <= 0 then
  broadcast(waiters, 'open', now_ms)
  return 2
end
return 1
