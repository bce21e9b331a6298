-- queues/heartbeat.lua (common/time.lua prepended): renew the heartbeat deadline of
-- consumers of one queue.
--
-- KEYS[1] consumers  zset: processing-list key -> heartbeat deadline (ms)
-- ARGV[1] timeout_ms validity of this heartbeat
-- ARGV[2..] processing-list keys of the consumers to renew
--
-- Returns the number of consumers renewed.

run_when_full(KEYS[1])  -- (a renewal: see common/time.lua)
local deadline = int(server_now_ms() + tonumber(ARGV[1]))
for i = 2, #ARGV do
  redis.call('ZADD', KEYS[1], deadline, ARGV[i])
end
return #ARGV - 1
