-- queues/common.lua: helpers shared by the queue scripts (prepended to them, after
-- common/time.lua).
--
-- Keys and arguments are those of the script that includes this file.
-- An envelope (a member of ready/delayed, an element of processing/dead) is
--   "<failed_attempts>|<max_attempts>|<enqueued_ms>|<priority>|<flags>|<id>\n<body>"
-- The numeric fields come first and the id last, so an id may contain any
-- allowed character (`|` included): it is the rest of the first line, never
-- split. <body> is the user's JSON, never decoded here (so numbers and empty
-- containers stay exactly as the producer wrote them). <flags>: 1 = the
-- message has a result record (a Django Task): when it is dead-lettered, its
-- id is also written to the queue's settle list, so a worker marks the record
-- FAILED even if the process that dead-lettered it dies right after.
-- 2 = REQUEUED (see requeued below). 4 = TRACED: <body> starts with one line of
-- trace headers (JSON) before the user's JSON; carried along like the body.
-- Envelopes of the first format, "<id>|<failed>|<max>|<enqueued_ms>|<priority>\n<body>"
-- (ids without `|`), are still read; rewritten envelopes take the new format.
-- Ready order score: (100 - priority) * 2^44 + position, popped lowest first:
-- higher priority first, then arrival order (FIFO) or reverse (LIFO).
-- Scores are formatted with %.0f: Lua's default number format keeps only 14
-- digits and would merge neighbouring scores.

local BAND = 17592186044416 -- 2^44 positions per priority band
local HAS_RECORD = 1

-- Split an envelope: id, failed attempts, max attempts, enqueued ms, priority,
-- flags, body. A malformed header reads as a message with one attempt, so it
-- is dead-lettered at its first failure instead of breaking the script.
local function parse(env)
  local nl = string.find(env, '\n', 1, true)
  if not nl then return '', 0, 1, 0, 0, 0, env end
  local header = string.sub(env, 1, nl - 1)
  local body = string.sub(env, nl + 1)
  local failed, max, enq, prio, flags, id = string.match(header, '^(%d+)|(%d+)|(%d+)|(%-?%d+)|(%d+)|(.*)$')
  if failed then
    return id, tonumber(failed), tonumber(max), tonumber(enq), tonumber(prio), tonumber(flags), body
  end
  local old_id
  old_id, failed, max, enq, prio = string.match(header, '^([^|]*)|(%d+)|(%d+)|(%d+)|(%-?%d+)$')
  if old_id then
    return old_id, tonumber(failed), tonumber(max), tonumber(enq), tonumber(prio), 0, body
  end
  return '', 0, 1, 0, 0, 0, env
end

-- The envelope with its failed-attempts count set (always in the new format).
local function with_failed(env, failed)
  local id, _, max, enq, prio, flags, body = parse(env)
  return failed .. '|' .. max .. '|' .. int(enq) .. '|' .. prio .. '|' .. flags .. '|' .. id .. '\n' .. body
end

-- Forget the entries of the settle list (see bury) of the messages whose ids
-- are keys of `ids`: requeued, they are no longer dead, and a late settle
-- must not mark the record of their new run FAILED. An entry is the id, a
-- newline (never in an id), then the detail.
local function unsettle(settle, ids)
  for _, entry in ipairs(redis.call('LRANGE', settle, 0, -1)) do
    local nl = string.find(entry, '\n', 1, true)
    if nl and ids[string.sub(entry, 1, nl - 1)] then
      redis.call('LREM', settle, 1, entry)
    end
  end
end

-- A dead letter given another chance: no failed attempts, and flag 2
-- (REQUEUED) set, so that whoever keeps a record of the message (the Tasks
-- runner) reopens it on the next delivery instead of keeping its old outcome.
local function requeued(env)
  local id, _, max, enq, prio, flags, body = parse(env)
  if flags % 4 < 2 then flags = flags + 2 end
  return '0|' .. max .. '|' .. int(enq) .. '|' .. prio .. '|' .. flags .. '|' .. id .. '\n' .. body
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

-- Move an envelope (already taken off its list) to the dead-letter list with
-- its error, keeping at most `limit` dead letters (0: no limit; the oldest are
-- dropped with their errors). A message with a result record is also written
-- to the settle list (see above), and its entry in `cancels` (the queue's
-- zset of messages cancelled while claimed: tasks/cancel.lua) is removed: a
-- dead letter is never claimed again unless requeued, and the cancel lives on
-- in its record. Returns the number of old letters dropped.
local function bury(dead, errors, settle, env, failed, error_text, now, limit, cancels)
  local id, _, _, _, _, flags = parse(env)
  redis.call('ZREM', cancels, id)
  local updated = with_failed(env, failed)
  redis.call('RPUSH', dead, updated)
  local detail = cjson.encode({error = error_text, attempts = failed, failed_ms = now})
  redis.call('HSET', errors, id, detail)
  if flags % 2 == HAS_RECORD then
    redis.call('RPUSH', settle, id .. '\n' .. detail)  -- ids never contain a newline
  end
  local dropped = 0
  if limit > 0 then
    -- at most 100 per call, so lowering the limit never makes one script long
    while dropped < 100 and redis.call('LLEN', dead) > limit do
      local oldest = redis.call('LPOP', dead)
      local old_id = parse(oldest)
      redis.call('HDEL', errors, old_id)
      dropped = dropped + 1
    end
  end
  return dropped
end

-- Unique tasks (queues/push_unique.lua). Two hashes of the queue:
--   uniq      unique key -> "<id>\n<state>\n<expires_ms>\n<until>\n<envelope>"
--   uniq_ids  message id -> its unique key, for the message that holds it
-- state 'q': the holder waits (ready, delayed, a retry); 'r': a worker claimed
-- it. until 's': the key is freed when a worker claims the holder; 'f': when the
-- holder leaves for good (acknowledged, dead-lettered, cancelled). <envelope>:
-- the holder as pushed, kept only when a later push may replace it. Past
-- <expires_ms> (the TTL safety net) the key counts as free.

local function unique_get(uniq, ukey)
  local v = redis.call('HGET', uniq, ukey)
  if not v then return nil end
  return string.match(v, '^([^\n]*)\n(%a)\n(%d+)\n(%a)\n(.*)$')
end

local function unique_put(uniq, ukey, id, state, expires, untl, env)
  redis.call('HSET', uniq, ukey, id .. '\n' .. state .. '\n' .. expires .. '\n' .. untl .. '\n' .. env)
end

-- The message `id` left for good: free the key it holds, if any.
local function unique_free(uniq, uniq_ids, id)
  local ukey = redis.call('HGET', uniq_ids, id)
  if ukey then
    redis.call('HDEL', uniq_ids, id)
    if unique_get(uniq, ukey) == id then redis.call('HDEL', uniq, ukey) end
  end
end

-- The message `id` was claimed ('r') or waits again ('q'); a claim frees an
-- until 's' key.
local function unique_state(uniq, uniq_ids, id, state)
  local ukey = redis.call('HGET', uniq_ids, id)
  if not ukey then return end
  local holder, _, expires, untl, env = unique_get(uniq, ukey)
  if holder ~= id then
    redis.call('HDEL', uniq_ids, id)
  elseif state == 'r' and untl == 's' then
    redis.call('HDEL', uniq_ids, id)
    redis.call('HDEL', uniq, ukey)
  else
    unique_put(uniq, ukey, id, state, expires, untl, env)
  end
end

-- Groups: fair queuing per key (flag 8, GROUPED). A grouped envelope's body
-- starts with one line before the user's JSON (and before a TRACED line):
--   "<concurrency>|<rate_limit>|<rate_period_ms>|<burst>|<group>"
-- concurrency 0: no limit; rate_limit 0: no rate. The group is the rest of the
-- line (any text but a newline). A group has at most one message *in line*
-- (in ready, or in gwait) at a time, so the ready zset interleaves groups
-- round-robin whatever their load; its other messages wait in gpend in
-- order. Three keys of the queue, declared by every script that moves a
-- grouped message, in this order after ready and seq (G below):
--   gpend   zset, every score 0 (read by lexical range): "<group>\n<order>\n<envelope>",
--           order = 3-digit priority band then 14-digit arrival: a group's waiting
--           messages, highest priority then oldest first
--   gstate  hash: group -> "<in_line> <running> <tat_ms>": its messages in line and
--           claimed (unacknowledged), and the GCRA theoretical arrival time of its
--           rate; a group with nothing left and no future tat has no field
--   gwait   zset: envelope -> due (ms): messages in line that wait first (a retry's
--           backoff, or a claim refused by the group's rate); claims move due ones
--           to ready
-- Invariant: in_line + running <= concurrency (when limited); a group's next
-- message enters the line only when none is in line and fewer than its
-- concurrency run. A retry keeps its place in line (in gwait), so a group
-- limited to one at a time runs its messages strictly in order.
local GROUPED = 8

-- The group of a parsed envelope (its flags and body), with its limits: group,
-- concurrency, rate limit, rate period (ms), burst; nil when not grouped.
local function group_of(flags, body)
  if flags % 16 < 8 then return nil end
  local nl = string.find(body, '\n', 1, true)
  if not nl then return nil end
  local c, lim, per, burst, g = string.match(string.sub(body, 1, nl - 1), '^(%d+)|(%d+)|(%d+)|(%d+)|(.*)$')
  if not c then return nil end
  return g, tonumber(c), tonumber(lim), tonumber(per), tonumber(burst)
end

-- The helpers below take G = {ready, seq, gpend, gstate, gwait}: a table of
-- the script's KEYS, built where the script declares them, read as G[GSTATE]...
local READY, SEQ, GPEND, GSTATE, GWAIT = 1, 2, 3, 4, 5

local function gstate_get(G, g)
  local v = redis.call('HGET', G[GSTATE], g)
  if not v then return 0, 0, 0 end
  local a, b, t = string.match(v, '^(%-?%d+) (%-?%d+) ([%d%.]+)$')
  return math.max(tonumber(a) or 0, 0), math.max(tonumber(b) or 0, 0), tonumber(t) or 0
end

local function pending_head(G, g)
  return redis.call('ZRANGEBYLEX', G[GPEND], '[' .. g .. '\n', '(' .. g .. '\11', 'LIMIT', 0, 1)[1]
end

-- Store group g's state after putting its next waiting message in line if
-- the state allows (none in line, fewer than its concurrency running).
local function group_settle(G, g, in_line, running, tat, now)
  local head
  if in_line == 0 then
    head = pending_head(G, g)
    if head then
      local env = string.sub(head, #g + 20)
      local _, _, _, _, prio, flags, body = parse(env)
      local _, c = group_of(flags, body)
      if not c or c == 0 or running < c then
        redis.call('ZREM', G[GPEND], head)
        redis.call('ZADD', G[READY], order_score(G[SEQ], prio, '0', false), env)
        in_line = 1
      end
    end
  end
  if in_line == 0 and running == 0 and not head and tat <= now then
    redis.call('HDEL', G[GSTATE], g)
  else
    redis.call('HSET', G[GSTATE], g, in_line .. ' ' .. running .. ' ' .. string.format('%.3f', tat))
  end
end

-- A grouped message arrives (pushed, due after its delay, a dead letter
-- requeued): in line at once when its group allows, else behind the group's
-- others in gpend. Returns the gpend member, or nil when it went in line.
local function group_enter(G, env, g, c, prio, now)
  local in_line, running, tat = gstate_get(G, g)
  if in_line == 0 and (c == 0 or running < c) and not pending_head(G, g) then
    redis.call('ZADD', G[READY], order_score(G[SEQ], prio, '0', false), env)
    redis.call('HSET', G[GSTATE], g, '1 ' .. running .. ' ' .. string.format('%.3f', tat))
    return nil
  end
  local n = redis.call('INCR', G[SEQ]) % (BAND - 1) + 1
  local member = g .. '\n' .. string.format('%03d%014.0f', 100 - prio, n) .. '\n' .. env
  redis.call('ZADD', G[GPEND], 0, member)
  group_settle(G, g, in_line, running, tat, now)
  return member
end

-- A claimed grouped message left for good (acknowledged, dead-lettered,
-- cancelled): one fewer running; the group's next may enter the line.
local function group_done(G, g, now)
  local in_line, running, tat = gstate_get(G, g)
  group_settle(G, g, in_line, math.max(running - 1, 0), tat, now)
end

-- A claimed grouped message is back in line (a retry waiting in gwait, a
-- hand-back, a dead worker's message requeued).
local function group_back(G, g)
  local in_line, running, tat = gstate_get(G, g)
  redis.call('HSET', G[GSTATE], g, (in_line + 1) .. ' ' .. math.max(running - 1, 0) .. ' ' .. string.format('%.3f', tat))
end

-- A message in line left it without being claimed (cancelled).
local function group_unline(G, g, now)
  local in_line, running, tat = gstate_get(G, g)
  group_settle(G, g, math.max(in_line - 1, 0), running, tat, now)
end
