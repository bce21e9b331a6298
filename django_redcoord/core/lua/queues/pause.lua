-- queues/pause.lua (common/time.lua, queues/common.lua prepended): pause or resume a queue.
--
-- While a queue is paused its consumers claim nothing new from it (queues/claim.lua
-- reads KEYS[1] there): pushes, delays and retries go on as before, and what a
-- consumer already claimed is still delivered. Resuming wakes one idle consumer
-- if messages are ready (that one wakes the next, as after a push).
--
-- KEYS[1] paused   string: JSON {since_ms, reason} while the queue is paused
-- KEYS[2] ready    zset: envelope -> order score
-- KEYS[3] wake     list: one token while messages may be ready
-- KEYS[4] index    set: names of all queues (for the admin: a queue paused before
--                  its first push is listed, with its pause)
-- ARGV[1] mode     'pause' or 'resume'
-- ARGV[2] reason   why (shown on the dashboard; at most 500 characters; pause only)
-- ARGV[3] name     the queue's name (added to the index; pause only)
--
-- Returns 1 when this changed the queue (paused it, or resumed it), 0 when it
-- already was so (a pause keeps its first time and reason).

local paused, ready, wake, index = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
if ARGV[1] == 'pause' then
  if redis.call('EXISTS', paused) == 1 then return 0 end
  redis.call('SADD', index, ARGV[3])
  redis.call('SET', paused, '{"since_ms":' .. int(server_now_ms()) .. ',"reason":' .. cjson.encode(ARGV[2]) .. '}')
  return 1
end
if redis.call('DEL', paused) == 0 then return 0 end
if redis.call('ZCARD', ready) > 0 then
  wake_one(wake)
end
return 1
