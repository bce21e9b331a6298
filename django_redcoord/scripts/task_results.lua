-- task_results.lua: write fields of task result records and renew their expiry.
--
-- One command for several records (a finished task's outcome and the next
-- task's RUNNING state), instead of an HSET and an EXPIRE per record.
--
-- KEYS[i]   hash: a Django Task result record (status, times, errors, ...)
-- ARGV[1]   ttl: seconds each record lives after this write
-- ARGV[2..] for each key in order: n, then n field/value pairs
--
-- Returns the number of records written.

local ttl = tonumber(ARGV[1])
local pos = 2
for i = 1, #KEYS do
  local n = tonumber(ARGV[pos])
  redis.call('HSET', KEYS[i], unpack(ARGV, pos + 1, pos + 2 * n))
  redis.call('EXPIRE', KEYS[i], ttl)
  pos = pos + 2 * n + 1
end
return #KEYS
