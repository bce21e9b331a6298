-- signals/topic_receive.lua (common/time prepended): what a subscriber gets
-- without blocking: first the messages of subscribers whose lease ran out,
-- then new ones. Blocking for new messages (XREADGROUP ... BLOCK) is a
-- separate command: it cannot run in a script.
--
-- KEYS[1] stream   the topic's messages
-- ARGV[1] group    the consumer group
-- ARGV[2] consumer this subscriber
-- ARGV[3] lease_ms a message pending this long with another subscriber is taken over
-- ARGV[4] count    at most this many messages
-- ARGV[5] create   'new' or 'all' to create the group first if it is missing
--                  (from the next message, or from the oldest kept), '' not to
--
-- Returns {redelivered (1 or 0), entries}: entries as XREADGROUP gives them.

local stream, group, consumer = KEYS[1], ARGV[1], ARGV[2]
if ARGV[5] ~= '' then
  local ok, err = pcall(redis.call, 'XGROUP', 'CREATE', stream, group, ARGV[5] == 'all' and '0' or '$', 'MKSTREAM')
  if not ok and not string.find(tostring(err.err or err), 'BUSYGROUP', 1, true) then
    return redis.error_reply(tostring(err.err or err))
  end
end
local claimed = redis.call('XAUTOCLAIM', stream, group, consumer, ARGV[3], '0-0', 'COUNT', ARGV[4])
local taken = {}
for _, entry in ipairs(claimed[2]) do
  if entry[2] then table.insert(taken, entry) end -- a message trimmed while pending has no fields
end
if #taken > 0 then return {1, taken} end
local fresh = redis.call('XREADGROUP', 'GROUP', group, consumer, 'COUNT', ARGV[4], 'STREAMS', stream, '>')
if fresh and fresh[1] then return {0, fresh[1][2]} end
return {0, {}}
