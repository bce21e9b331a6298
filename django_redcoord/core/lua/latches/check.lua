-- latches/check.lua (common/time, common/broadcast, latches/common prepended):
-- a waiter looks at the latch and, unless it is open or broken, registers
-- (or renews) its wake list.
--
-- KEYS[1] state, KEYS[2] parties, KEYS[3] waiters, KEYS[4] index
-- KEYS[5] wake     the caller's wake list
-- ARGV[1] count    the initial count (used on first use)
-- ARGV[2] mode     'wait' register or renew, 'cancel' give up
-- ARGV[3] lease_ms how long the registration stays without another check
-- ARGV[4] name, ARGV[5] keep_ms
--
-- Returns {1} open, {-1, why} broken, {0, count, ms until the earliest
-- party lease runs out (0: none)} still closed.

local state, parties, waiters, index, wake = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local now_ms = server_now_ms()

prune_parties(state, parties, waiters, now_ms)
local count, broken = latch_state(state, ARGV[1])
if ARGV[2] == 'cancel' then
  unwatch(waiters, wake)
elseif not broken and count > 0 then
  watch(waiters, wake, now_ms + tonumber(ARGV[3]))
  latch_keep(state, parties, waiters, index, ARGV[4], tonumber(ARGV[5]), now_ms)
end
if broken or count <= 0 then redis.call('DEL', wake) end
if broken then return {-1, broken} end
if count <= 0 then return {1} end
return {0, count, next_party_expiry(parties, now_ms)}
