-- queues/groups_prune.lua (common/time.lua prepended): drop the fields of idle groups whose
-- rate no longer matters.
--
-- A group whose last message settled while its rate's theoretical arrival time
-- (tat) was still ahead keeps its field ("0 0 <tat>", queues/common.lua,
-- Groups), so a message arriving soon after still waits for the rate. Once the
-- tat has passed the field says nothing a missing one would not. Claims drop
-- one sampled such field each; every worker's heartbeat (and a retiring
-- worker) samples `most` more, so a queue a worker serves, busy or idle, does
-- not pile them up.
--
-- KEYS[1] gstate  hash: group -> "<in_line> <running> <tat_ms>"
-- ARGV[1] most    how many fields to sample
--
-- Returns the number of fields dropped.

local sample = redis.call('HRANDFIELD', KEYS[1], tonumber(ARGV[1]), 'WITHVALUES')
local now = server_now_ms()
local dropped = 0
for i = 1, #sample, 2 do
  local tat = string.match(sample[i + 1], '^0 0 ([%d%.]+)$')
  if tat and tonumber(tat) <= now then
    redis.call('HDEL', KEYS[1], sample[i])
    dropped = dropped + 1
  end
end
return dropped
