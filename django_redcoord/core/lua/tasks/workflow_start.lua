-- tasks/workflow_start.lua (common/time.lua prepended): write a new workflow and list it as
-- running, in one step (tasks/workflow.lua then starts its first members).
--
-- KEYS[1] wf     hash: the workflow (see tasks/workflow.lua)
-- KEYS[2] index  zset: workflow id -> when a sweeper looks at it next (ms)
-- ARGV[1] the workflow id
-- ARGV[2] ms from now to the sweeper's first look
-- ARGV[3..] the workflow's field/value pairs
--
-- Returns 1 written, 0 the workflow exists already (written before: nothing changed).

if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
local i = 3
while i <= #ARGV do -- at most 1,000 pairs a call of HSET (Lua's unpack limit)
  local last = math.min(i + 1999, #ARGV)
  redis.call('HSET', KEYS[1], unpack(ARGV, i, last))
  i = last + 1
end
redis.call('ZADD', KEYS[2], server_now_ms() + tonumber(ARGV[2]), ARGV[1])
return 1
