-- latches/abort.lua (common/time, common/broadcast, latches/common prepended):
-- break the latch on purpose (a party failed, an operator's action): every
-- waiter learns it at once; counting down no longer opens it.
--
-- KEYS[1] state, KEYS[2] parties, KEYS[3] waiters
-- ARGV[1] why      the reason waiters are given
-- ARGV[2] token    the party giving up ('' for anyone else)
--
-- Returns 1.

local state, parties, waiters = KEYS[1], KEYS[2], KEYS[3]
local now_ms = server_now_ms()
if ARGV[2] ~= '' then
  redis.call('ZREM', parties, ARGV[2])
  redis.call('HDEL', state, 'p:' .. ARGV[2])
end
latch_break(state, waiters, ARGV[1], now_ms)
return 1
