-- queues/push.lua (common/time.lua, queues/common.lua prepended): add messages to a queue.
--
-- KEYS[1] ready    zset: envelope -> order score
-- KEYS[2] seq      integer: arrival counter
-- KEYS[3] delayed  zset: envelope -> due time (ms since the epoch)
-- KEYS[4] wake     list: one token while messages may be ready
-- KEYS[5] index    set: names of all queues (for the admin)
-- KEYS[6] record   (optional) hash written in the same step: a Django Task's
--                  result record, so a task is enqueued in one command; its
--                  field 'envelope' is set to the (one) message's envelope as
--                  pushed, by which tasks/cancel.lua finds it in ready or delayed
--                  (with no record: any key, unused)
-- KEYS[7] gpend, KEYS[8] gstate, KEYS[9] gwait: the group keys (queues/common.lua),
--                  given only with grouped messages (flag 8): one whose group
--                  allows it goes in line at once, the others wait in gpend
--                  (then a record's field 'pending' holds its gpend member, by
--                  which tasks/cancel.lua finds it)
-- ARGV[1] queue name to add to the index, or '' when the caller knows it is there
-- ARGV[2] lifo     '1' for last-in-first-out order, else '0'
-- ARGV[3] r        number of field/value pairs for KEYS[6] (0: no record)
-- ARGV[4] ttl      seconds KEYS[6] lives (ignored when r is 0); negative: push only if
--                  KEYS[6] does not exist yet (an outbox re-send, whose message id is
--                  its idempotency key), living -ttl seconds
-- ARGV[5 .. 4+2r]  the record's field/value pairs
-- then three per message: envelope (built by the caller, see
--           queues/common.lua), priority (-100..100), delay_ms (0: ready now;
--           else due that long after this script's server time)
--
-- Returns the number of messages added.

local ready, seq, delayed, wake, index = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local lifo, r = ARGV[2], tonumber(ARGV[3])
if r > 0 then
  local ttl = tonumber(ARGV[4])
  if ttl < 0 then
    if redis.call('EXISTS', KEYS[6]) == 1 then return 0 end -- pushed already
    ttl = -ttl
  end
  redis.call('HSET', KEYS[6], 'envelope', ARGV[5 + 2 * r], unpack(ARGV, 5, 4 + 2 * r))
  redis.call('EXPIRE', KEYS[6], ttl)
end
local now
local n = 0
for i = 5 + 2 * r, #ARGV, 3 do
  local delay = tonumber(ARGV[i + 2])
  local flags = tonumber(string.match(ARGV[i], '^%d+|%d+|%d+|%-?%d+|(%d+)|'))
  local g, c, prio
  if delay <= 0 and flags and flags % 16 >= GROUPED then
    local _, body
    _, _, _, _, prio, _, body = parse(ARGV[i])
    g, c = group_of(flags, body)
  end
  if delay > 0 then
    now = now or server_now_ms()
    redis.call('ZADD', delayed, string.format('%.0f', now + delay), ARGV[i])
  elseif g then
    if not KEYS[9] then return redis.error_reply('ERR grouped messages need the group keys') end
    now = now or server_now_ms()
    local member = group_enter({ready, seq, KEYS[7], KEYS[8], KEYS[9]}, ARGV[i], g, c, prio, now)
    if member and r > 0 then redis.call('HSET', KEYS[6], 'pending', member) end
  else
    redis.call('ZADD', ready, order_score(seq, tonumber(ARGV[i + 1]), lifo, false), ARGV[i])
  end
  n = n + 1
end
if ARGV[1] ~= '' then redis.call('SADD', index, ARGV[1]) end
wake_one(wake)
return n
