-- latches/check.lua (common/time, common/broadcast, latches/common prepended):
-- a waiter looks at the latch and, unless it is open or broken, registers
-- (or renews) its registration, and learns where to read the wake stream from.
--
-- KEYS[1] state, KEYS[2] parties, KEYS[3] waiters, KEYS[4] index
-- KEYS[5] wake     stream: the waiters' wake-ups (common/broadcast.lua)
-- KEYS[6] probe    never written: refuses the script whole while its slot migrates (common/broadcast.lua)
-- ARGV[1] count    the initial count (used on first use)
-- ARGV[2] mode     'wait' register or renew, 'cancel' give up
-- ARGV[3] lease_ms how long the registration stays without another check
-- ARGV[4] name, ARGV[5] keep_ms
-- ARGV[6] epoch    the epoch this waiter saw at its first look ('' at first):
--                  another one now means Redis lost the latch's data while
--                  it waited, so the latch breaks (unless it opened since)
-- ARGV[7] token    the waiter's token (its registration)
--
-- Returns {1} open, {-1, why} broken, {0, count, ms until the earliest
-- party lease runs out (0: none), epoch, mark} still closed: block reading the
-- wake stream after entry `mark`.

do local refused = keys_moving() if refused then return refused end end
local state, parties, waiters, index, wake = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local now_ms = server_now_ms()

prune_parties(state, parties, waiters, wake, now_ms)
local count, broken, epoch = latch_state(state, ARGV[1])
if not broken and count > 0 and ARGV[6] ~= '' and ARGV[6] ~= epoch then
  latch_break(state, waiters, wake, LATCH_LOST, now_ms)
  broken = LATCH_LOST
end
if ARGV[2] == 'cancel' then
  unwatch(waiters, ARGV[7])
elseif not broken and count > 0 then
  watch(waiters, ARGV[7], now_ms + tonumber(ARGV[3]))
end
latch_keep(state, parties, waiters, index, ARGV[4], tonumber(ARGV[5]), now_ms)
if broken then return {-1, broken} end
if count <= 0 then return {1} end
return {0, count, next_party_expiry(parties, now_ms), epoch, wake_mark(wake)}
