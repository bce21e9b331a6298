-- queue_heartbeat.lua: renew the heartbeat deadline of consumers of one queue.
--
-- KEYS[1] consumers  zset: processing-list key -> heartbeat deadline (ms)
-- ARGV[1] timeout_ms validity of this heartbeat
-- ARGV[2..] processing-list keys of the consumers to renew
--
-- Returns the number of consumers renewed.

local t = redis.call('TIME')
local deadline = string.format('%.0f', tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) + tonumber(ARGV[1]))
for i = 2, #ARGV do
  redis.call('ZADD', KEYS[1], deadline, ARGV[i])
end
return #ARGV - 1
