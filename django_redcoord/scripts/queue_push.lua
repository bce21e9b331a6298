-- queue_push.lua (queue_common.lua prepended): add messages to a queue.
--
-- KEYS[1] ready    zset: envelope -> order score
-- KEYS[2] seq      integer: arrival counter
-- KEYS[3] delayed  zset: envelope -> due time (ms since the epoch)
-- KEYS[4] wake     list: one token while messages may be ready
-- KEYS[5] index    set: names of all queues (for the admin)
-- ARGV[1] queue name (member of the index)
-- ARGV[2] lifo     '1' for last-in-first-out order, else '0'
-- ARGV[3..] five per message: id, max_attempts, priority (-100..100),
--           delay_ms (0: ready now), body (JSON text)
--
-- Returns the number of messages added.

local ready, seq, delayed, wake, index = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local lifo = ARGV[2]
local now = server_now_ms()
local n = 0
for i = 3, #ARGV, 5 do
  local prio, delay = tonumber(ARGV[i + 2]), tonumber(ARGV[i + 3])
  local env = ARGV[i] .. '|0|' .. ARGV[i + 1] .. '|' .. now .. '|' .. prio .. '\n' .. ARGV[i + 4]
  if delay > 0 then
    redis.call('ZADD', delayed, string.format('%.0f', now + delay), env)
  else
    redis.call('ZADD', ready, order_score(seq, prio, lifo, false), env)
  end
  n = n + 1
end
redis.call('SADD', index, ARGV[1])
wake_one(wake)
return n
