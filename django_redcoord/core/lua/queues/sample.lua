-- queues/sample.lua (common/time.lua prepended): a worker's once-a-minute report
-- on one queue it serves, and the queue's sample for the minute if nobody
-- took it yet, for the admin's charts.
--
-- Every worker adds what it finished since its last report to `done`; the
-- first worker to run this in a minute of the server's clock (whatever the
-- workers' own clocks say) also appends {minute, depth, done} to the history.
-- The claim of the minute is the compare-and-set of `sampled` below, inside
-- this script: two workers in the same minute write one sample.
--
-- KEYS[1] ready      zset: envelope -> order score
-- KEYS[2] delayed    zset: envelope -> due time (ms)
-- KEYS[3] consumers  zset: processing-list key -> heartbeat deadline (ms)
-- KEYS[4] counts     hash: done (messages finished, reported by the workers),
--                    sampled (the minute of the last sample, unix time // 60 s)
-- KEYS[5] history    list: "<minute> <depth> <done>" newest first, numbers only
-- The processing lists are the members of KEYS[3] (same hash tag).
-- ARGV[1] done       messages of this queue the worker finished since its last report (>= 0)
-- ARGV[2] keep       samples kept in KEYS[4] (61: an hour of per-minute differences)
-- ARGV[3] ttl        seconds KEYS[4] and KEYS[5] live after the last report
--                    (a queue nobody serves any more loses them)
--
-- Returns 1 if this run wrote the minute's sample, 0 if it was taken already.

local ready, delayed, consumers, counts, history = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local keep, ttl = tonumber(ARGV[2]), tonumber(ARGV[3])
local done = redis.call('HINCRBY', counts, 'done', tonumber(ARGV[1]))
redis.call('EXPIRE', counts, ttl)
local minute = math.floor(server_now_ms() / 60000)
if tonumber(redis.call('HGET', counts, 'sampled') or '-1') >= minute then
  return 0
end
redis.call('HSET', counts, 'sampled', int(minute))
local depth = redis.call('ZCARD', ready) + redis.call('ZCARD', delayed)
for _, key in ipairs(redis.call('ZRANGE', consumers, 0, -1)) do
  depth = depth + redis.call('LLEN', key)
end
redis.call('LPUSH', history, int(minute) .. ' ' .. int(depth) .. ' ' .. int(done))
redis.call('LTRIM', history, 0, keep - 1)
redis.call('EXPIRE', history, ttl)
return 1
