-- rwlocks/extend.lua (common/time, common/waiters, rwlocks/common prepended):
-- renew the lease of a read or write hold we own.
--
-- KEYS[1] state, KEYS[2] readers, KEYS[3] index (see acquire.lua)
-- ARGV[1] token, ARGV[2] ttl_ms, ARGV[3] name, ARGV[4] kind ('r' | 'w')
--
-- Returns 0 not ours (the lease ran out), 1 extended.

local state, readers, index = KEYS[1], KEYS[2], KEYS[3]
local token, ttl, name, kind = ARGV[1], tonumber(ARGV[2]), ARGV[3], ARGV[4]

local now_ms = server_now_ms()
local meta = read_meta(state)
local rec = held_by(state, kind, token)
if not rec or tonumber(rec[3]) < now_ms then
  return 0
end
rec[3] = now_ms + ttl
run_when_full(state)  -- (a renewal: see common/time.lua)
if kind == 'w' then
  redis.call('HSET', state, 'w', cmsgpack.pack(rec))
else
  redis.call('ZADD', readers, 'XX', rec[3], token)
  redis.call('HSET', state, 'r:' .. token, cmsgpack.pack(rec))
end
keep(state, readers, index, name, meta, rec[3], ttl)
return 1
