-- queues/purge.lua (common/time.lua, queues/common.lua prepended): drop every waiting message.
--
-- Ready, delayed and grouped messages waiting (in line or behind their group)
-- are dropped; claimed ones and dead letters stay. Each group keeps its count
-- of claimed messages (so its concurrency still holds while they finish) and
-- its rate; none of its messages is in line any more.
--
-- KEYS[1] ready, KEYS[2] seq, KEYS[3] gpend, KEYS[4] gstate, KEYS[5] gwait: the
--         group keys (queues/common.lua), ready first
-- KEYS[6] delayed  zset: envelope -> due time (ms)
--
-- Returns the number of messages dropped.

local G = {KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]}
local n = redis.call('ZCARD', G[READY]) + redis.call('ZCARD', KEYS[6]) + redis.call('ZCARD', G[GPEND])
  + redis.call('ZCARD', G[GWAIT])
redis.call('DEL', G[READY], KEYS[6], G[GPEND], G[GWAIT])
local now = server_now_ms()
local fields = redis.call('HGETALL', G[GSTATE])
for i = 1, #fields, 2 do
  local _, running, tat = gstate_get(G, fields[i])
  group_settle(G, fields[i], 0, running, tat, now)
end
return n
