-- queues/depths.lua (common/time.lua, queues/common.lua prepended): the counts of one queue.
--
-- KEYS[1] ready      zset: envelope -> order score
-- KEYS[2] delayed    zset: envelope -> due time (ms)
-- KEYS[3] dead       list: dead-lettered envelopes
-- KEYS[4] consumers  zset: processing-list key -> heartbeat deadline (ms)
-- The processing lists are the members of KEYS[4] (same hash tag).
--
-- Returns {ready, delayed, processing, dead, consumers, head_age_ms}:
-- head_age_ms is the age of the next message to be delivered, -1 if none.

local ready, delayed, dead, consumers = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local processing = 0
local members = redis.call('ZRANGE', consumers, 0, -1)
for _, key in ipairs(members) do
  processing = processing + redis.call('LLEN', key)
end
local age = -1
local head = redis.call('ZRANGE', ready, 0, 0)
if head[1] then
  local _, _, _, enq = parse(head[1])
  age = math.max(0, server_now_ms() - enq)
end
return {redis.call('ZCARD', ready), redis.call('ZCARD', delayed), processing,
        redis.call('LLEN', dead), #members, age}
