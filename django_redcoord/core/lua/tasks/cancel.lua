-- tasks/cancel.lua (common/time.lua, queues/common.lua prepended): cancel a Django Task.
--
-- One script decides, so a cancel and a claim are ordered: a message still
-- waiting (ready or delayed) is taken out and never runs; one already claimed
-- is listed in the queue's cancels zset, so that queues/claim.lua drops it if it
-- comes back (a hand-back, a retry, a reaped worker) and the worker running it
-- is told (it polls the record's 'cancelled' field). Either way the record is
-- final at once: FAILED with a TaskCancelled error, and the guards of
-- tasks/results.lua refuse every later write of the cancelled attempt (its
-- late outcome is dropped).
--
-- KEYS[1] record   hash: the task's result record (status, 'envelope' as pushed:
--                  see queues/push.lua, worker.N, error.N, ...)
-- then for each queue the task may be on (the backend's queues in the record's
-- Cluster slot; the record's 'queue' field says which), three keys:
-- KEYS[2+3i] ready    zset: envelope -> order score
-- KEYS[3+3i] delayed  zset: envelope -> due time (ms)
-- KEYS[4+3i] cancels  zset: id -> cancel time (ms) of messages cancelled while claimed
-- ARGV[1] id       the task's result id (its message id)
-- ARGV[2] error    JSON {exception_class_path, traceback} of the TaskCancelled error
-- ARGV[3] now_iso  finished_at (the caller's clock, as every time of a record)
-- ARGV[4] ttl      seconds the final record lives (RESULT_TTL_FAILED)
-- ARGV[5] keep_ms  how long a cancels entry may wait for its claim or
--                  acknowledgement; older ones are dropped here (the message was
--                  dead-lettered, or its queue is gone)
-- ARGV[6+i] the name of queue i (i = 0, 1, ...), in the order of the keys
--
-- Returns {code, delivery}: code 0 no such record (never ours, or expired);
-- 1 it already has an outcome (SUCCESSFUL or FAILED): nothing changed;
-- 2 taken out of ready or delayed: it never runs;
-- 3 claimed: a worker holds it (it may be running); the record is final and
-- the worker is told; 4 its queue (returned as the third element) is none of
-- the given: nothing changed. delivery: the N of the error.N written (0 for
-- codes 0, 1 and 4).

local record = KEYS[1]
local id = ARGV[1]
local status, queue = unpack(redis.call('HMGET', record, 'status', 'queue'))
if not status then return {0, 0} end
local ready, delayed, cancels
for i = 6, #ARGV do
  if ARGV[i] == queue then
    local k = 2 + 3 * (i - 6)
    ready, delayed, cancels = KEYS[k], KEYS[k + 1], KEYS[k + 2]
  end
end
if not ready then
  if status == 'SUCCESSFUL' or status == 'FAILED' then return {1, 0} end
  return {4, 0, queue or ''}
end

local function finish(n)
  redis.call('HSET', record, 'status', 'FAILED', 'finished_at', ARGV[3], 'error.' .. n, ARGV[2],
    'cancelled', ARGV[3])
  redis.call('EXPIRE', record, tonumber(ARGV[4]))
end

-- Waiting: the envelope as pushed, with 0 .. max-1 failed deliveries (a retry
-- waits in delayed with its count), or as an operator requeued it (flag 2).
local env = redis.call('HGET', record, 'envelope')
if env then
  local _, _, max, enq, prio, flags, body = parse(env)
  local function tail(f)
    return '|' .. max .. '|' .. int(enq) .. '|' .. prio .. '|' .. f .. '|' .. id .. '\n' .. body
  end
  local variants = {flags}
  if flags % 4 < 2 then variants[2] = flags + 2 end
  for failed = 0, max - 1 do
    for _, f in ipairs(variants) do
      local candidate = failed .. tail(f)
      if redis.call('ZREM', ready, candidate) + redis.call('ZREM', delayed, candidate) > 0 then
        finish(failed + 1)
        return {2, failed + 1}
      end
    end
  end
end

if status == 'SUCCESSFUL' or status == 'FAILED' then return {1, 0} end

-- Claimed. The attempt is the newest worker.N (written at claim), else the one
-- after the last error.N.
local n, errors = 0, 0
for _, field in ipairs(redis.call('HKEYS', record)) do
  local kind, k = string.match(field, '^(%a+)%.(%d+)$')
  if kind == 'worker' and tonumber(k) > n then n = tonumber(k) end
  if kind == 'error' and tonumber(k) > errors then errors = tonumber(k) end
end
if n <= errors then n = errors + 1 end
local now = server_now_ms()
redis.call('ZREMRANGEBYSCORE', cancels, '-inf', '(' .. int(now - tonumber(ARGV[5])))
redis.call('ZADD', cancels, int(now), id)
finish(n)
return {3, n}
