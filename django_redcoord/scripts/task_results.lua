-- task_results.lua: write fields of task result records and renew their expiry.
--
-- One command for several records (finished tasks' outcomes, a running
-- task's RUNNING state), instead of an HSET and an EXPIRE per record.
--
-- KEYS[i]   hash: a Django Task result record (status, times, errors, ...)
-- ARGV[1]   ttl: seconds each record lives after this write
-- ARGV[2..] for each key in order: guard, n, then n field/value pairs.
--           guard '' writes unconditionally; guard N (a delivery number)
--           writes only if that delivery has not ended yet: the record is
--           not SUCCESSFUL or FAILED and holds no error.N (a RUNNING mark
--           sent late must not overwrite an outcome).
--
-- Returns the number of records written.

local ttl = tonumber(ARGV[1])
local pos = 2
local written = 0
for i = 1, #KEYS do
  local guard, n = ARGV[pos], tonumber(ARGV[pos + 1])
  local ok = true
  if guard ~= '' then
    local status = redis.call('HGET', KEYS[i], 'status')
    ok = status ~= 'SUCCESSFUL' and status ~= 'FAILED'
      and redis.call('HEXISTS', KEYS[i], 'error.' .. guard) == 0
  end
  if ok then
    redis.call('HSET', KEYS[i], unpack(ARGV, pos + 2, pos + 1 + 2 * n))
    redis.call('EXPIRE', KEYS[i], ttl)
    written = written + 1
  end
  pos = pos + 2 * n + 2
end
return written
