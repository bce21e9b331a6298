-- tasks/results.lua: write fields of task result records and renew their expiry.
--
-- One command for several records (finished tasks' outcomes, a running
-- task's RUNNING state, dead letters to mark FAILED), instead of an HSET and
-- an EXPIRE per record. A record that no longer exists (it expired after
-- RESULT_TTL) is never recreated in part.
--
-- KEYS[i]   hash: a Django Task result record (status, times, errors, ...)
-- ARGV[1]   ttl: seconds each record lives after this write
-- ARGV[2..] for each key in order: guard, n, then n field/value pairs.
--           guard ''     writes whenever the record exists;
--           guard N      (a delivery number) writes only if that delivery has
--                        not ended yet: the record is not SUCCESSFUL or FAILED
--                        and holds no error.N (a RUNNING mark sent late must
--                        not overwrite an outcome);
--           guard 'dead' (the message was dead-lettered) writes only if the
--                        record holds no outcome yet (SUCCESSFUL or FAILED);
--           guard 'reopen' (the first delivery of a requeued dead letter)
--                        writes whenever the record exists and was not
--                        cancelled (tasks/cancel.lua), after removing
--                        what the earlier deliveries recorded: finished_at,
--                        return_value, and every error.N and worker.N field.
--           guard 'unclaim' (messages handed back unstarted) removes each given
--                        field whose value is the one given (worker.N = this
--                        worker), while the record holds no outcome; writes nothing.
--
-- Returns a list, one element per key: 1 written, 0 refused (or no record).

local ttl = tonumber(ARGV[1])
local pos = 2
local written = {}
for i = 1, #KEYS do
  local wrote = 0
  local guard, n = ARGV[pos], tonumber(ARGV[pos + 1])
  local status = redis.call('HGET', KEYS[i], 'status')
  local ok = status ~= false
  if ok and guard == 'unclaim' then
    ok = false
    if status ~= 'SUCCESSFUL' and status ~= 'FAILED' then
      for j = pos + 2, pos + 2 * n, 2 do
        if redis.call('HGET', KEYS[i], ARGV[j]) == ARGV[j + 1] then
          redis.call('HDEL', KEYS[i], ARGV[j])
          wrote = 1
        end
      end
    end
  elseif ok and guard == 'reopen' and redis.call('HEXISTS', KEYS[i], 'cancelled') == 1 then
    ok = false
  elseif ok and guard == 'reopen' then
    local stale = {'finished_at', 'return_value'}
    for _, field in ipairs(redis.call('HKEYS', KEYS[i])) do
      if string.sub(field, 1, 6) == 'error.' or string.sub(field, 1, 7) == 'worker.' then
        stale[#stale + 1] = field
      end
    end
    redis.call('HDEL', KEYS[i], unpack(stale))
  elseif ok and guard ~= '' then
    ok = status ~= 'SUCCESSFUL' and status ~= 'FAILED'
    if ok and guard ~= 'dead' then
      ok = redis.call('HEXISTS', KEYS[i], 'error.' .. guard) == 0
    end
  end
  if ok then
    redis.call('HSET', KEYS[i], unpack(ARGV, pos + 2, pos + 1 + 2 * n))
    redis.call('EXPIRE', KEYS[i], ttl)
    wrote = 1
  end
  written[i] = wrote
  pos = pos + 2 * n + 2
end
return written
