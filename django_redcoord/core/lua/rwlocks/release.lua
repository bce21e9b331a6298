-- rwlocks/release.lua (common/time, common/waiters, rwlocks/common prepended):
-- end a read or write hold; admit the waiters the state now allows.
--
-- KEYS[1] state, KEYS[2] readers, KEYS[3] queue, KEYS[4] index, KEYS[5] first (see acquire.lua)
-- ARGV[1] token, ARGV[2] name, ARGV[3] kind ('r' | 'w')
--
-- Returns 0 not ours (the lease ran out: untouched), 1 released,
--         2 released and handed on.

local state, readers, queue, index, first = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local token, name, kind = ARGV[1], ARGV[2], ARGV[3]

local clock = lazy_clock_us()
local now_ms = math.floor(clock() / 1000)
local meta = read_meta(state)
prune(state, readers, meta, now_ms)
if not held_by(state, kind, token) then
  return 0
end
if kind == 'w' then
  redis.call('HDEL', state, 'w')
  meta.writer = nil
else
  redis.call('ZREM', readers, token)
  redis.call('HDEL', state, 'r:' .. token)
end
local handed = admit(state, readers, queue, index, name, meta, clock, nil, first)
if handed > 0 then return 2 end
unindex_if_idle(state, readers, index, name, meta, now_ms)
return 1
