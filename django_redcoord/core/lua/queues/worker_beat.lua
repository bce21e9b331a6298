-- queues/worker_beat.lua (common/time.lua prepended): a worker process's heartbeat, for
-- its consumers and the admin page.
--
-- A worker that dies without retiring (SIGKILL, OOM, machine gone) stays
-- listed as dead for DEAD_KEEP_MS after its deadline, then any live worker's
-- beat removes it: the index never grows with every worker that ever ran.
--
-- KEYS[1] workers    zset: worker id -> heartbeat deadline (ms), all workers
-- KEYS[2] worker     hash: identity fields of this worker (host, pid, queues, current, ...)
-- ARGV[1] worker id  member of KEYS[1]
-- ARGV[2] timeout_ms the worker counts as dead this long after the beat
-- ARGV[3] retire     '1': the worker is stopping, remove it
-- ARGV[4..] field, value pairs to store in KEYS[2] (heartbeat_ms is added)
--
-- Returns the server time of the beat (ms).

local DEAD_KEEP_MS = 600000

local now = server_now_ms()
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', '(' .. int(now - DEAD_KEEP_MS))
if ARGV[3] == '1' then
  redis.call('ZREM', KEYS[1], ARGV[1])
  redis.call('DEL', KEYS[2])
  return now
end
local timeout = tonumber(ARGV[2])
redis.call('ZADD', KEYS[1], int(now + timeout), ARGV[1])
if #ARGV >= 5 then
  redis.call('HSET', KEYS[2], 'heartbeat_ms', now, unpack(ARGV, 4))
else
  redis.call('HSET', KEYS[2], 'heartbeat_ms', now)
end
redis.call('PEXPIRE', KEYS[2], timeout + DEAD_KEEP_MS)
return now
