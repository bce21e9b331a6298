-- queues/hand_back.lua (common/time.lua, queues/common.lua prepended): return unstarted messages.
--
-- A stopping worker gives back what it prefetched but did not start: the
-- envelopes go to the front of the ready queue, the attempt not counted.
--
-- KEYS[1] processing  list: the consumer's in-flight envelopes
-- KEYS[2] ready       zset: envelope -> order score
-- KEYS[3] consumers   zset: processing-list key -> heartbeat deadline (ms)
-- KEYS[4] wake        list: one token while messages may be ready
-- KEYS[5] uniq        hash: unique key -> its holder (see queues/common.lua)
-- KEYS[6] uniq_ids    hash: id -> the unique key it holds: a handed-back holder
--                     waits again ('q')
-- KEYS[7] seq, KEYS[8] gpend, KEYS[9] gstate, KEYS[10] gwait: the group keys
--                     (queues/common.lua, with KEYS[2] as ready): a handed-back
--                     grouped message is back in its group's line
-- ARGV[1] retire      '1': the consumer stops; drop it when nothing is left in flight
-- ARGV[2..] envelopes to hand back
--
-- Returns the number of envelopes handed back.

local processing, ready, consumers, wake = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local G = {ready, KEYS[7], KEYS[8], KEYS[9], KEYS[10]}
local n = 0
for i = 2, #ARGV do
  if redis.call('LREM', processing, 1, ARGV[i]) == 1 then
    local _, _, _, _, prio, flags, body = parse(ARGV[i])
    redis.call('ZADD', ready, order_score(nil, prio, '0', #ARGV - i + 1), ARGV[i])
    local g = group_of(flags, body)
    if g then group_back(G, g) end
    unique_state(KEYS[5], KEYS[6], (parse(ARGV[i])), 'q')
    n = n + 1
  end
end
if ARGV[1] == '1' and redis.call('LLEN', processing) == 0 then
  redis.call('ZREM', consumers, processing)
end
if n > 0 then wake_one(wake) end
return n
