-- latches/barrier_reset.lua (common/time, common/broadcast, latches/barrier_common
-- prepended): back to empty and whole (threading.Barrier.reset: the parties
-- waiting now raise BarrierBroken), or, with mode 'abort', broken.
--
-- KEYS[1] state, KEYS[2] parties
-- ARGV[1] mode     'reset' or 'abort'
-- ARGV[2] why      the reason given to the waiting parties (abort)
--
-- Returns 1.

local state, parties = KEYS[1], KEYS[2]
if ARGV[1] == 'abort' then
  barrier_break(state, parties, ARGV[2])
  return 1
end
-- The parties waiting in this generation learn it was reset (reset_gen); the
-- next generation starts whole.
local gen = tonumber(redis.call('HGET', state, 'gen') or '0')
redis.call('HSET', state, 'reset_gen', gen, 'gen', gen + 1)
redis.call('HDEL', state, 'broken', 'broken_gen')
wake_arrived(state, parties, 'broken', nil)
return 1
