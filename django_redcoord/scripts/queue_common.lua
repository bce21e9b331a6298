-- queue_common.lua: helpers shared by the queue scripts (prepended to them).
--
-- Keys and arguments are those of the script that includes this file.
-- An envelope (a member of ready/delayed, an element of processing/dead) is
--   "<id>|<failed_attempts>|<max_attempts>|<enqueued_ms>|<priority>\n<body>"
-- where <body> is the user's JSON, never decoded here (so numbers and empty
-- containers stay exactly as the producer wrote them).
-- Ready order score: (100 - priority) * 2^44 + position, popped lowest first:
-- higher priority first, then arrival order (FIFO) or reverse (LIFO).
-- Scores are formatted with %.0f: Lua's default number format keeps only 14
-- digits and would merge neighbouring scores.

local BAND = 17592186044416 -- 2^44 positions per priority band

local function server_now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

-- Split an envelope: id, failed attempts, max attempts, enqueued ms, priority, body.
local function parse(env)
  local nl = string.find(env, '\n', 1, true)
  local id, failed, max, enq, prio = string.match(string.sub(env, 1, nl - 1),
    '^([^|]*)|(%d+)|(%d+)|(%d+)|(%-?%d+)$')
  return id, tonumber(failed), tonumber(max), tonumber(enq), tonumber(prio), string.sub(env, nl + 1)
end

local function with_failed(env, failed)
  local id, _, max, enq, prio, body = parse(env)
  return id .. '|' .. failed .. '|' .. max .. '|' .. enq .. '|' .. prio .. '\n' .. body
end

-- Score at the back of the line (next arrival) or, with front = k >= 1, just
-- ahead of every message of the same priority (redelivery after a crash or a
-- hand-back): k positions before the band, so a batch returned with
-- k = n, n-1, ..., 1 keeps its order.
local function order_score(seq_key, prio, lifo, front)
  local base = (100 - prio) * BAND
  if front then return string.format('%.0f', base - front) end
  local n = redis.call('INCR', seq_key) % (BAND - 1) + 1
  if lifo == '1' then n = BAND - n end
  return string.format('%.0f', base + n)
end

local function wake_one(wake)
  if redis.call('LLEN', wake) == 0 then
    redis.call('RPUSH', wake, 1)
  end
end
