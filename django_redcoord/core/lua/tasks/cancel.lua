-- tasks/cancel.lua (common/time.lua, queues/common.lua prepended): cancel a Django Task.
--
-- One script decides, so a cancel and a claim are ordered: a message still
-- waiting (ready or delayed) is taken out and never delivered again; one
-- already claimed is listed in the queue's cancels zset, so that
-- queues/claim.lua drops it if it comes back (a hand-back, a retry, a reaped
-- worker) and the worker running it is told (it polls the record's
-- 'cancelled' field). Either way the record is final at once: FAILED with a
-- TaskCancelled error, and the guards of tasks/results.lua refuse every later
-- write of the cancelled attempt (its late outcome is dropped, and a requeued
-- dead letter's 'reopen' too). A second cancel changes nothing and answers
-- what the first did (the 'cancelled' field keeps it), so a cancel whose reply
-- was lost can be sent again.
--
-- KEYS[1] record   hash: the task's result record (status, queue, 'envelope' as
--                  pushed: see queues/push.lua, worker.N, error.N, cancelled)
-- then for each queue the task may be on (the backend's queues in the record's
-- Cluster slot; the record's 'queue' field says which), ten keys:
-- KEYS[2+10i] ready    zset: envelope -> order score
-- KEYS[3+10i] delayed  zset: envelope -> due time (ms)
-- KEYS[4+10i] cancels  zset: id -> cancel time (ms) of messages cancelled while claimed
-- KEYS[5+10i] errors   hash: message id -> JSON detail, of the queue's dead letters
-- KEYS[6+10i] uniq     hash: unique key -> its holder (queues/common.lua)
-- KEYS[7+10i] uniq_ids hash: id -> the unique key it holds: a cancelled task frees it
-- KEYS[8+10i] seq, KEYS[9+10i] gpend, KEYS[10+10i] gstate, KEYS[11+10i] gwait: the
--                      group keys (queues/common.lua): a grouped task waiting behind
--                      its group (the record's 'pending' names its gpend member) is
--                      taken out of gpend; one in line (ready or gwait) leaves the
--                      line, and its group's next enters it
-- ARGV[1] id       the task's result id (its message id)
-- ARGV[2] error    JSON {exception_class_path, traceback} of the TaskCancelled error
-- ARGV[3] now_iso  finished_at (the caller's clock, as every time of a record)
-- ARGV[4] ttl      seconds the final record lives (RESULT_TTL_FAILED)
-- ARGV[5] keep_ms  how long a cancels entry may wait for its claim or
--                  acknowledgement; older ones are dropped here (its queue is gone)
-- ARGV[6+i] the name of queue i (i = 0, 1, ...), in the order of the keys
--
-- Returns {code, delivery}: code 0 no such record (never ours, or expired);
-- 1 it already had an outcome (SUCCESSFUL, or dead-lettered):
-- nothing changed (a waiting redelivery of a success is taken out all the
-- same: it would only run again); 2 taken out of ready or delayed: it is never
-- delivered again; 3 requested: a worker may be running it (it claimed it, or
-- an earlier delivery whose worker stopped heartbeating ended without an
-- outcome and may still resume), the worker is told; 4 its queue (returned as
-- the third element) is none of the given: nothing changed. delivery: the N of
-- the error.N written (0 when nothing was written).

local record = KEYS[1]
local id = ARGV[1]
local status, queue, cancelled, duplicate = unpack(redis.call('HMGET', record, 'status', 'queue', 'cancelled',
  'duplicate_of'))
if not status then return {0, 0} end
if duplicate then return {1, 0} end -- a unique task's duplicate: never queued (queues/push_unique.lua)
local final = status == 'SUCCESSFUL' or status == 'FAILED'
local ready, delayed, cancels, errors, uniq, uniq_ids, G
for i = 6, #ARGV do
  if ARGV[i] == queue then
    local k = 2 + 10 * (i - 6)
    ready, delayed, cancels, errors, uniq, uniq_ids = KEYS[k], KEYS[k + 1], KEYS[k + 2], KEYS[k + 3], KEYS[k + 4], KEYS[k + 5]
    G = {ready, KEYS[k + 6], KEYS[k + 7], KEYS[k + 8], KEYS[k + 9]}
  end
end
if not ready then
  if final or cancelled then return {1, 0} end
  return {4, 0, queue or ''}
end

-- The deliveries so far: worker.N is written at each claim, error.N at each
-- failure. A waiting message has failed at most once per delivery.
local workers, errs, has_error = 0, 0, {}
for _, field in ipairs(redis.call('HKEYS', record)) do
  local kind, k = string.match(field, '^(%a+)%.(%d+)$')
  if kind == 'worker' and tonumber(k) > workers then workers = tonumber(k) end
  if kind == 'error' then
    has_error[tonumber(k)] = true
    if tonumber(k) > errs then errs = tonumber(k) end
  end
end

-- Waiting: the envelope as pushed with 0 .. max-1 failed deliveries (a retry
-- waits in delayed with its count), or as an operator requeued it (flag 2). One
-- not found here (past the budget below) is still never delivered: it gets a
-- cancels entry below, which the claim honours.
local removed, lined, group
local env, pending = unpack(redis.call('HMGET', record, 'envelope', 'pending'))
if pending and redis.call('ZREM', G[GPEND], pending) == 1 then removed = 0 end
if env and not removed then
  local _, _, max, enq, prio, flags, body = parse(env)
  group = group_of(flags, body)
  local function tail(f)
    return '|' .. max .. '|' .. int(enq) .. '|' .. prio .. '|' .. f .. '|' .. id .. '\n' .. body
  end
  local variants = {flags}
  if flags % 4 < 2 then variants[2] = flags + 2 end
  -- the counts the record's marks allow first; past them (deliveries that left no mark)
  -- at most about 2 MB of candidates, so that a big envelope with a high max_attempts
  -- cannot stall the server
  local likely, spent = math.max(workers, errs) + 1, 0
  local failed = 0
  while not removed and failed < max and (failed <= likely or spent < 2000000) do
    for _, f in ipairs(variants) do
      local candidate = failed .. tail(f)
      if not removed then
        local in_line = redis.call('ZREM', ready, candidate)
        if group then in_line = in_line + redis.call('ZREM', G[GWAIT], candidate) end
        if in_line + redis.call('ZREM', delayed, candidate) > 0 then
          removed, lined = failed, in_line > 0
        end
      end
      if failed > likely then spent = spent + #candidate end
    end
    failed = failed + 1
  end
end

if lined and group then group_unline(G, group, server_now_ms()) end

if cancelled then -- cancelled before: the same answer, nothing rewritten
  if removed then redis.call('ZREM', cancels, id) end
  return {tonumber(string.sub(cancelled, 1, 1)) or 1, 0}
end
if status == 'SUCCESSFUL' then
  if removed then unique_free(uniq, uniq_ids, id) end
  return {1, 0}
end
if not removed and redis.call('HEXISTS', errors, id) == 1 then
  -- a dead letter (its record FAILED, or soon: the settle list); an operator's requeue
  -- takes it out of the errors hash
  return {1, 0}
end

local function finish(n, code)
  unique_free(uniq, uniq_ids, id)
  redis.call('HSET', record, 'status', 'FAILED', 'finished_at', ARGV[3], 'error.' .. n, ARGV[2],
    'cancelled', code .. ' ' .. ARGV[3])
  redis.call('EXPIRE', record, tonumber(ARGV[4]))
  return {code, n}
end

if removed then
  -- the delivery before it ended without an error: its worker stopped heartbeating and
  -- the reaper took it back; it may still resume and run on until it looks
  if removed >= 1 and not has_error[removed] then return finish(removed + 1, 3) end
  return finish(removed + 1, 2)
end

-- Claimed (or a requeued dead letter claimed, or one deleted since): the newest
-- delivery, else the one after the last error.
local n = workers
if n <= errs then n = errs + 1 end
local now = server_now_ms()
redis.call('ZREMRANGEBYSCORE', cancels, '-inf', '(' .. int(now - tonumber(ARGV[5])))
redis.call('ZADD', cancels, int(now), id)
return finish(n, 3)
