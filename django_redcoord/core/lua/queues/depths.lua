-- queues/depths.lua (common/time.lua, queues/common.lua prepended): the counts of one queue.
--
-- KEYS[1] ready      zset: envelope -> order score
-- KEYS[2] delayed    zset: envelope -> due time (ms)
-- KEYS[3] dead       list: dead-lettered envelopes
-- KEYS[4] consumers  zset: processing-list key -> heartbeat deadline (ms)
-- KEYS[5] paused     string, while the queue is paused (queues/pause.lua)
-- KEYS[6] gpend      zset: grouped messages waiting behind their group (counted ready)
-- KEYS[7] gwait      zset: grouped messages in line that wait for a time (a retry,
--                    their group's rate: counted delayed)
-- KEYS[8] gstate     hash: group -> its counts (queues/common.lua): the groups with
--                    messages, and idle ones whose rate's last start is still
--                    remembered ("0 0 <tat>"; not counted while the hash has at
--                    most IDLE_CHECKED fields, counted beyond: its length then)
-- The processing lists are the members of KEYS[4] (same hash tag).
--
-- Returns {ready, delayed, processing, dead, consumers, oldest_age_ms, groups, paused}
-- (paused: the pause's JSON, or false while it is not paused):
-- oldest_age_ms is the age of the older of the first and the last ready
-- message in delivery order, -1 if none: the oldest ready message whenever
-- the queue has one priority (first when FIFO, last when LIFO); with several,
-- an older message of a middle priority may be missed.

local ready, delayed, dead, consumers = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local processing = 0
local members = redis.call('ZRANGE', consumers, 0, -1)
for _, key in ipairs(members) do
  processing = processing + redis.call('LLEN', key)
end
local age = -1
local ends = redis.call('ZRANGE', ready, 0, 0)
local last = redis.call('ZRANGE', ready, -1, -1)
ends[2] = last[1]
for _, envelope in pairs(ends) do
  local _, _, _, enq = parse(envelope)
  age = math.max(age, server_now_ms() - enq, 0)
end
local IDLE_CHECKED = 1000
local groups = redis.call('HLEN', KEYS[8])
if groups > 0 and groups <= IDLE_CHECKED then
  for _, v in ipairs(redis.call('HVALS', KEYS[8])) do
    if string.match(v, '^0 0 ') then groups = groups - 1 end
  end
end
return {redis.call('ZCARD', ready) + redis.call('ZCARD', KEYS[6]),
        redis.call('ZCARD', delayed) + redis.call('ZCARD', KEYS[7]), processing,
        redis.call('LLEN', dead), #members, age, groups, redis.call('GET', KEYS[5])}
