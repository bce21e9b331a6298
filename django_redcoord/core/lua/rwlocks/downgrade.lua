-- rwlocks/downgrade.lua (common/time, common/waiters, rwlocks/common
-- prepended): turn our write hold into a read hold, atomically (nobody can
-- write in between), and let the readers queued behind us in with us.
--
-- KEYS[1] state, KEYS[2] readers, KEYS[3] queue, KEYS[4] index, KEYS[5] first (see acquire.lua)
-- ARGV[1] token, ARGV[2] name
--
-- Returns {0} not our write hold (the lease ran out), {1, fence} now reading
-- (a new fencing token: the read grant's).

local state, readers, queue, index, first = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local token, name = ARGV[1], ARGV[2]

local clock = lazy_clock_us()
local now_ms = math.floor(clock() / 1000)
local meta = read_meta(state)
prune(state, readers, meta, now_ms)
local rec = held_by(state, 'w', token)
if not rec then return {0} end
redis.call('HDEL', state, 'w')
meta.writer = nil
local ttl = math.max(1, tonumber(rec[3]) - now_ms)
local fence = grant(state, readers, index, name, meta, 'r', token, ttl, clock(), rec[4], rec[5], rec[6])
admit(state, readers, queue, index, name, meta, clock, nil, first)
return {1, fence}
