-- latches/renew.lua (common/time, common/broadcast, latches/common prepended):
-- a party renews its lease. Follows the hold contract's extend.
--
-- KEYS[1] state, KEYS[2] parties, KEYS[3] index, KEYS[4] waiters
-- KEYS[5] wake     stream: the waiters' wake-ups (common/broadcast.lua)
-- KEYS[6] probe    never written: refuses the script whole while its slot migrates (common/broadcast.lua)
-- ARGV[1] token, ARGV[2] ttl_ms, ARGV[3] name, ARGV[4] count (the initial
-- count, used on first use), ARGV[5] keep_ms
--
-- Returns 0 the lease had run out (or the party counted down), 1 renewed.
-- A party whose entry is gone without its tombstone ('d:<token>', written when
-- it counted down or gave up) lost it with Redis's data: the latch breaks, so
-- that waiters and parties that come after the loss learn it too.

do local refused = keys_moving() if refused then return refused end end
local state, parties, index, waiters, wake = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local token, ttl = ARGV[1], tonumber(ARGV[2])
local now_ms = server_now_ms()
local score = redis.call('ZSCORE', parties, token)
if not score then
  if redis.call('HEXISTS', state, 'd:' .. token) == 0 and redis.call('HEXISTS', state, 'p:' .. token) == 0 then
    latch_state(state, ARGV[4])
    latch_break(state, waiters, wake, LATCH_LOST, now_ms)
    latch_keep(state, parties, waiters, index, ARGV[3], tonumber(ARGV[5]), now_ms)
  end
  return 0
end
if tonumber(score) < now_ms then return 0 end
if redis.call('HEXISTS', state, 'p:' .. token) == 0 then
  -- Our entry is here and our record is not: Redis lost the state alone (evicted
  -- without the parties set), and with it the count-downs made so far.
  latch_state(state, ARGV[4])
  latch_break(state, waiters, wake, LATCH_LOST, now_ms)
  latch_keep(state, parties, waiters, index, ARGV[3], tonumber(ARGV[5]), now_ms)
  return 0
end
run_when_full(parties)  -- (a renewal: see common/time.lua)
redis.call('ZADD', parties, 'XX', now_ms + ttl, token)
latch_keep(state, parties, waiters, index, ARGV[3], tonumber(ARGV[5]), now_ms)
return 1
