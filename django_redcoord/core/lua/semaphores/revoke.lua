-- semaphores/revoke.lua (common/time, common/waiters, semaphores/common
-- prepended): an operator takes back one permit.
--
-- Only the grant the operator saw (its fencing token) is revoked; its holder's
-- next release or extend raises LockLost. The permit goes to the oldest live
-- waiter, if any.
--
-- KEYS[1] state, KEYS[2] holders, KEYS[3] queue, KEYS[4] index, KEYS[5] first (see acquire.lua)
-- ARGV[1] name     the semaphore's name
-- ARGV[2] fence    the fencing token of the grant to revoke
-- ARGV[3] permits  '' (the limit set by resize(), else the one callers last asked for)
--
-- Returns 0 no live grant with that fence, 1 revoked, 2 revoked and handed on.

local state, holders, queue, index, first = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local name, fence = ARGV[1], ARGV[2]

local clock = lazy_clock_us()
local now_ms = math.floor(clock() / 1000)
prune(state, holders, now_ms)
local found
for _, t in ipairs(redis.call('ZRANGE', holders, 0, -1)) do
  local raw = redis.call('HGET', state, 'h:' .. t)
  if raw then
    local ok, rec = pcall(cmsgpack.unpack, raw)
    if ok and type(rec) == 'table' and int(rec[1]) == fence then found = t break end
  end
end
if not found then return 0 end
redis.call('ZREM', holders, found)
redis.call('HDEL', state, 'h:' .. found)
local meta = read_meta(state)
local handed = fill(state, holders, queue, index, name, meta, limit_of(meta, ARGV[3]), clock, nil, first)
if handed > 0 then return 2 end
unindex_if_idle(state, holders, index, name, now_ms)
return 1
