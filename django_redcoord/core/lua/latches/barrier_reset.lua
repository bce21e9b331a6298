-- latches/barrier_reset.lua (common/time, common/broadcast, latches/barrier_common
-- prepended): back to empty and whole (threading.Barrier.reset: the parties
-- waiting now raise BarrierBroken), or, with mode 'abort', broken.
--
-- KEYS[1] state, KEYS[2] parties
-- KEYS[3] wake     stream: the arrived parties' wake-ups (common/broadcast.lua)
-- KEYS[4] probe    never written: refuses the script whole while its slot migrates (common/broadcast.lua)
-- ARGV[1] mode     'reset' or 'abort'
-- ARGV[2] why      the reason given to the waiting parties (abort)
-- ARGV[3] keep_ms  how long the barrier lives after its last use
--
-- Returns 1.

do local refused = keys_moving() if refused then return refused end end
local state, parties, wake = KEYS[1], KEYS[2], KEYS[3]
barrier_epoch(state)
redis.call('PEXPIRE', state, tonumber(ARGV[3]))
if ARGV[1] == 'abort' then
  barrier_break(state, parties, wake, ARGV[2])
  return 1
end
-- The parties waiting in this generation learn it was reset (reset_gen); the
-- next generation starts whole.
local gen = tonumber(redis.call('HGET', state, 'gen') or '0')
redis.call('HSET', state, 'reset_gen', gen, 'gen', gen + 1)
redis.call('HDEL', state, 'broken', 'broken_gen')
wake_arrived(state, parties, wake, 'broken')
return 1
