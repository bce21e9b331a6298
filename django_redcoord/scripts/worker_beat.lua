-- worker_beat.lua: a worker process's heartbeat, for its consumers and the admin page.
--
-- KEYS[1] workers    zset: worker id -> heartbeat deadline (ms), all workers
-- KEYS[2] worker     hash: identity fields of this worker (host, pid, queues, current, ...)
-- ARGV[1] worker id  member of KEYS[1]
-- ARGV[2] timeout_ms the worker counts as dead this long after the beat
-- ARGV[3] retire     '1': the worker is stopping, remove it
-- ARGV[4..] field, value pairs to store in KEYS[2] (heartbeat_ms is added)
--
-- Returns the server time of the beat (ms).

local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
if ARGV[3] == '1' then
  redis.call('ZREM', KEYS[1], ARGV[1])
  redis.call('DEL', KEYS[2])
  return now
end
redis.call('ZADD', KEYS[1], string.format('%.0f', now + tonumber(ARGV[2])), ARGV[1])
if #ARGV >= 5 then
  redis.call('HSET', KEYS[2], 'heartbeat_ms', now, unpack(ARGV, 4))
else
  redis.call('HSET', KEYS[2], 'heartbeat_ms', now)
end
redis.call('PEXPIRE', KEYS[2], tonumber(ARGV[2]) * 3)
return now
