-- semaphores/inspect.lua (common/time, common/waiters, semaphores/common
-- prepended): the holders of a semaphore, read-only.
--
-- KEYS[1] state, KEYS[2] holders, KEYS[3] queue (see acquire.lua)
-- ARGV[1] permits  the caller's limit ('' from the admin: the one callers last
--                  asked for); a limit set by resize() wins
--
-- Returns {limit, queued, then per live holder: token, fence, ttl_ms, host,
-- pid, thread} (holders oldest lease first; expired ones are left out).

local state, holders, queue = KEYS[1], KEYS[2], KEYS[3]
local now_ms = server_now_ms()
local meta = read_meta(state)
local out = {limit_of(meta, ARGV[1]), redis.call('LLEN', queue)}
local live = redis.call('ZRANGEBYSCORE', holders, now_ms, '+inf', 'WITHSCORES')
for i = 1, #live, 2 do
  local raw = redis.call('HGET', state, 'h:' .. live[i])
  local ok, rec = false, nil
  if raw then ok, rec = pcall(cmsgpack.unpack, raw) end
  if ok and type(rec) == 'table' then
    table.insert(out, live[i])
    table.insert(out, rec[1])
    table.insert(out, tonumber(live[i + 1]) - now_ms)
    table.insert(out, rec[3] or '')
    table.insert(out, tonumber(rec[4]) or 0)
    table.insert(out, rec[5] or '')
  end
end
return out
