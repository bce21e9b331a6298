-- latches/abort.lua (common/time, common/broadcast, latches/common prepended):
-- break the latch on purpose (a party failed, an operator's action): every
-- waiter learns it at once; counting down no longer opens it. An open latch
-- stays open (nothing happens).
--
-- KEYS[1] state, KEYS[2] parties, KEYS[3] waiters, KEYS[4] index
-- KEYS[5] wake     stream: the waiters' wake-ups (common/broadcast.lua)
-- KEYS[6] probe    never written: refuses the script whole while its slot migrates (common/broadcast.lua)
-- ARGV[1] why      the reason waiters are given
-- ARGV[2] token    the party giving up ('' for anyone else)
-- ARGV[3] count    the initial count (used on first use)
-- ARGV[4] name, ARGV[5] keep_ms
--
-- Returns 1 broken (now or before), 0 it is open (nothing broken).

do local refused = keys_moving() if refused then return refused end end
local state, parties, waiters, index, wake = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local now_ms = server_now_ms()
if ARGV[2] ~= '' then
  redis.call('ZREM', parties, ARGV[2])
  redis.call('HDEL', state, 'p:' .. ARGV[2])
  redis.call('HSET', state, 'd:' .. ARGV[2], 1)  -- its tombstone (see renew.lua)
end
local count = latch_state(state, ARGV[3])
latch_keep(state, parties, waiters, index, ARGV[4], tonumber(ARGV[5]), now_ms)
if count <= 0 then return 0 end
latch_break(state, waiters, wake, ARGV[1], now_ms)
return 1
