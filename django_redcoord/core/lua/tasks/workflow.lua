-- tasks/workflow.lua (common/time.lua, queues/common.lua prepended): move a workflow on.
--
-- A workflow is a chain (members one after another) or a group (members at once), with an
-- optional callback ('then') that starts when the members have ended. Its hash holds, for
-- each member x (0 .. n-1, and 'then'): 'id.x' its result id, 'q.x' its queue, 'st.x' its
-- state, and while it waits to start 'p.x', its push prepared at the enqueue (JSON: env,
-- record (field/value list), ttl, queue). States: 'w' not started; 'q' pushed (its record
-- written in the same step); 'ok' / 'failed' ended; 'skipped' never to start. A member ends
-- when its result record says SUCCESSFUL or FAILED (the task's scripts wrote it: its run,
-- its dead letter, a cancel) or is gone. Every call first looks at the members it is given,
-- then decides, so calls are idempotent: a member is counted once (its state leaves 'q' in
-- the step that counts it), pushed once (its state leaves 'w' in the step that pushes it),
-- and the callback runs once. A call whose decision needs a member it was not given the
-- keys of names it (needs): the caller calls again with them.
--
-- Policies when a member fails: 'fail_fast' no member starts any more, the members still
-- waiting or running are returned to be cancelled, the callback is skipped; 'run_callback'
-- no member starts any more, those running finish, then the callback runs; 'continue' the
-- failure changes nothing, the callback runs at the end. The workflow is SUCCESSFUL when
-- every member and the callback succeeded, else FAILED, once nothing is left to run.
--
-- KEYS[1] wf       hash: the workflow (fields above, and kind, policy, n, status, ended,
--                  failed, pushed, next (a chain's next member), stopped, has_then)
-- KEYS[2] index    zset: workflow id -> when a sweeper looks at it next (ms); a workflow
--                  leaves it when it ends
-- then, for each member given (ARGV[5..]), 8 keys:
--   record (its result record), ready, seq, wake, qindex (the queue's, as for
--   queues/push.lua), gpend, gstate, gwait (its queue's group keys)
-- ARGV[1] the workflow id
-- ARGV[2] ms from now to the sweeper's next look at this workflow (while it runs); a sweep
--         that changes nothing doubles it for the next (the field 'idle' counts them), up to
--         64 times, so a workflow waiting on a long task is not looked at every few seconds
-- ARGV[3] ttl: seconds the workflow hash lives once it ended (it lives on while it runs)
-- ARGV[4] '0' a call after a member ended; 's' a sweep; '1' cancel the workflow: no member
--         starts any more, the callback is skipped, the members waiting or running are
--         returned to be cancelled (again, should it have stopped already)
-- ARGV[5..] the members given: '0' .. 'n-1' or 'then', one per 8 keys
--
-- Returns {status, needs..., '', cancels...}: status RUNNING, SUCCESSFUL, FAILED or GONE (no
-- such workflow); needs: the members to start whose keys were not given; cancels: result ids
-- of members to cancel (fail_fast, or a cancel of the workflow), given once.

local wf, index, wid = KEYS[1], KEYS[2], ARGV[1]
local fields = redis.call('HMGET', wf, 'status', 'kind', 'policy', 'n', 'ended', 'failed', 'pushed',
  'next', 'stopped', 'has_then')
local status = fields[1]
if not status then return {'GONE'} end
if status ~= 'RUNNING' then return {status} end
local kind, policy, n = fields[2], fields[3], tonumber(fields[4])
local ended, failed, pushed = tonumber(fields[5]), tonumber(fields[6]), tonumber(fields[7])
local nxt, stopped, has_then = tonumber(fields[8]), fields[9] == '1', fields[10] == '1'
local now = server_now_ms()
local before = ended .. ' ' .. pushed

local given = {} -- member -> the index of its first key
for i = 5, #ARGV do
  given[ARGV[i]] = 3 + 8 * (i - 5)
end

-- 1. look at the members given: count those that ended
local then_state = has_then and redis.call('HGET', wf, 'st.then') or 'skipped'
for x, k in pairs(given) do
  if redis.call('HGET', wf, 'st.' .. x) == 'q' then
    local rs = redis.call('HGET', KEYS[k], 'status')
    local outcome
    if rs == 'SUCCESSFUL' then outcome = 'ok' elseif rs == 'FAILED' or not rs then outcome = 'failed' end
    if outcome then
      redis.call('HSET', wf, 'st.' .. x, outcome)
      if x == 'then' then
        then_state = outcome
      else
        ended = ended + 1
        if outcome == 'failed' then failed = failed + 1 end
      end
    end
  end
end

-- 2. decide
local cancels = {}
local function stop()
  if stopped and ARGV[4] ~= '1' then return end
  stopped = true
  if policy == 'fail_fast' or ARGV[4] == '1' then -- the members still waiting or running
    for i = 0, n - 1 do
      if redis.call('HGET', wf, 'st.' .. i) == 'q' then cancels[#cancels + 1] = redis.call('HGET', wf, 'id.' .. i) end
    end
    if has_then and then_state == 'q' then cancels[#cancels + 1] = redis.call('HGET', wf, 'id.then') end
  end
end
if ARGV[4] == '1' then
  stop()
  if then_state == 'w' then then_state = 'skipped' end
end
if failed > 0 and policy ~= 'continue' then
  stop()
  if policy == 'fail_fast' and then_state == 'w' then then_state = 'skipped' end
end

local needs = {}
local function start(x)
  local k = given[x]
  if not k then
    needs[#needs + 1] = x
    return false
  end
  local p = cjson.decode(redis.call('HGET', wf, 'p.' .. x))
  local G = {KEYS[k + 1], KEYS[k + 2], KEYS[k + 5], KEYS[k + 6], KEYS[k + 7]}
  if redis.call('EXISTS', KEYS[k]) == 0 then
    redis.call('HSET', KEYS[k], 'envelope', p.env, unpack(p.record))
    redis.call('EXPIRE', KEYS[k], p.ttl)
    local _, _, _, _, prio, flags, body = parse(p.env)
    local g, c = group_of(flags, body)
    if g then
      local member = group_enter(G, p.env, g, c, prio, now)
      if member then redis.call('HSET', KEYS[k], 'pending', member) end
    else
      redis.call('ZADD', G[READY], order_score(G[SEQ], prio, '0', false), p.env)
    end
    redis.call('SADD', KEYS[k + 4], p.queue)
    wake_one(KEYS[k + 3])
  end
  redis.call('HSET', wf, 'st.' .. x, 'q')
  redis.call('HDEL', wf, 'p.' .. x)
  return true
end

if not stopped then
  if kind == 'group' then
    while nxt < n do -- every member starts at once
      if not start(tostring(nxt)) then break end
      nxt, pushed = nxt + 1, pushed + 1
    end
  elseif nxt < n and (nxt == 0 or ended == pushed) then -- the one before it has ended
    if start(tostring(nxt)) then nxt, pushed = nxt + 1, pushed + 1 end
  end
end

-- the members are done when every started one has ended and no other will start
local members_done = ended == pushed and (stopped or pushed == n)
if members_done and then_state == 'w' then
  if start('then') then then_state = 'q' end
end
redis.call('HSET', wf, 'ended', ended, 'failed', failed, 'pushed', pushed, 'next', nxt,
  'stopped', stopped and '1' or '0')
if has_then then redis.call('HSET', wf, 'st.then', then_state) end
if members_done and then_state ~= 'w' and then_state ~= 'q' then
  local outcome = 'SUCCESSFUL'
  if failed > 0 or pushed < n or (has_then and then_state ~= 'ok') then outcome = 'FAILED' end
  for i = nxt, n - 1 do -- never started
    redis.call('HSET', wf, 'st.' .. i, 'skipped')
    redis.call('HDEL', wf, 'p.' .. i)
  end
  redis.call('HDEL', wf, 'p.then')
  redis.call('HSET', wf, 'status', outcome, 'ended_ms', now)
  redis.call('EXPIRE', wf, tonumber(ARGV[3]))
  redis.call('ZREM', index, wid)
  status = outcome
else
  local idle = 0
  if ARGV[4] == 's' and before == ended .. ' ' .. pushed and #cancels == 0 then
    idle = math.min(tonumber(redis.call('HGET', wf, 'idle') or '0') + 1, 6)
  end
  redis.call('HSET', wf, 'idle', idle)
  redis.call('ZADD', index, now + tonumber(ARGV[2]) * 2 ^ idle, wid)
end
local out = {status}
for _, x in ipairs(needs) do out[#out + 1] = x end
out[#out + 1] = ''
for _, id in ipairs(cancels) do out[#out + 1] = id end
return out
