-- latches/renew.lua (common/time, common/broadcast, latches/common prepended):
-- a party renews its lease. Follows the hold contract's extend.
--
-- KEYS[1] state, KEYS[2] parties, KEYS[3] index
-- ARGV[1] token, ARGV[2] ttl_ms, ARGV[3] name, ARGV[4] count (unused), ARGV[5] keep_ms (unused)
--
-- Returns 0 the lease had run out (or the party counted down), 1 renewed.

local state, parties = KEYS[1], KEYS[2]
local token, ttl = ARGV[1], tonumber(ARGV[2])
local now_ms = server_now_ms()
local score = redis.call('ZSCORE', parties, token)
if not score or tonumber(score) < now_ms then return 0 end
redis.call('ZADD', parties, 'XX', now_ms + ttl, token)
return 1
