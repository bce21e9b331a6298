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
-- ARGV[5] from     where the group starts if it is missing: '$' (the next
--                  message), '0' (the oldest kept) or a message id (after it:
--                  the last one this subscriber received). A group goes
--                  missing on first use, and when Redis lost it (a restart
--                  without persistence, a failover to a replica without it,
--                  XGROUP DESTROY): it is created again from there
-- ARGV[6] idle_ms  a consumer that holds no message and was idle this long is
--                  deleted (see below)
--
-- Returns {redelivered (1 or 0), entries, created (1 the group was missing
-- and was created now, else 0)}: entries as XREADGROUP gives them.
--
-- Every subscriber is a consumer of the group, and Redis keeps a consumer until
-- it is deleted: one receive in CONSUMER_SWEEP_EVERY deletes the consumers
-- that hold no message and did nothing for idle_ms (subscribers gone:
-- a process that subscribed per request or per start would otherwise grow the
-- group for good). Deleting one that is still there costs nothing: it holds no
-- message, and its next read creates it again.

local stream, group, consumer = KEYS[1], ARGV[1], ARGV[2]
local CONSUMER_SWEEP_EVERY, idle_ms = 16, tonumber(ARGV[6])

-- Delete the group's consumers that hold nothing and were idle idle_ms.
local function sweep_consumers()
  for _, c in ipairs(redis.call('XINFO', 'CONSUMERS', stream, group)) do
    local info = {}
    for i = 1, #c, 2 do info[c[i]] = c[i + 1] end
    if info.name ~= consumer and tonumber(info.pending) == 0
        and tonumber(info.idle) >= idle_ms then
      redis.call('XGROUP', 'DELCONSUMER', stream, group, info.name)
    end
  end
end

local function is_nogroup(err)
  return string.find(tostring(type(err) == 'table' and err.err or err), 'NOGROUP', 1, true) ~= nil
end

local created = 0
local ok, claimed = pcall(redis.call, 'XAUTOCLAIM', stream, group, consumer, ARGV[3], '0-0', 'COUNT', ARGV[4])
if not ok then
  if not is_nogroup(claimed) then return redis.error_reply(tostring(claimed.err or claimed)) end
  local made, err = pcall(redis.call, 'XGROUP', 'CREATE', stream, group, ARGV[5], 'MKSTREAM')
  if not made and not string.find(tostring(err.err or err), 'BUSYGROUP', 1, true) then
    return redis.error_reply(tostring(err.err or err))
  end
  created = 1
  claimed = redis.call('XAUTOCLAIM', stream, group, consumer, ARGV[3], '0-0', 'COUNT', ARGV[4])
end
if created == 0 and tonumber(redis.call('TIME')[2]) % CONSUMER_SWEEP_EVERY == 0 then
  sweep_consumers()
end
local taken = {}
for _, entry in ipairs(claimed[2]) do
  if entry[2] then table.insert(taken, entry) end -- a message trimmed while pending has no fields
end
if #taken > 0 then return {1, taken, created} end
local fresh = redis.call('XREADGROUP', 'GROUP', group, consumer, 'COUNT', ARGV[4], 'STREAMS', stream, '>')
if fresh and fresh[1] then return {0, fresh[1][2], created} end
return {0, {}, created}
