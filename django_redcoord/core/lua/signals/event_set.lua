-- signals/event_set.lua (common/time, common/broadcast prepended): set an
-- event (it stays set) and wake every waiter, or clear it.
--
-- KEYS[1] state    hash: set ('1' or '0'), data (JSON given to set()), gen (+1 per set)
-- KEYS[2] waiters  zset: waiter token -> registration deadline (common/broadcast.lua)
-- KEYS[3] index    hash (shared): event name -> a bound on when it was last used (s)
-- KEYS[4] wake     stream: the waiters' wake-ups (common/broadcast.lua)
-- KEYS[5] probe    never written: refuses the script whole while its slot migrates (common/broadcast.lua)
-- ARGV[1] op       'set' or 'clear'
-- ARGV[2] data     JSON (set) or ''
-- ARGV[3] name, ARGV[4] keep_ms
--
-- Returns how many waiters were woken (set), 0 (clear).

do local refused = keys_moving() if refused then return refused end end
local state, waiters, index, wake = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local now_ms = server_now_ms()
local keep = tonumber(ARGV[4])
local woken = 0
if ARGV[1] == 'set' then
  redis.call('HSET', state, 'set', '1', 'data', ARGV[2])
  redis.call('HINCRBY', state, 'gen', 1)
  woken = broadcast(waiters, wake, 'set', now_ms)
else
  redis.call('HSET', state, 'set', '0')
end
redis.call('PEXPIRE', state, keep)
index_put(index, ARGV[3], math.ceil((now_ms + keep) / 1000), now_ms)
return woken
