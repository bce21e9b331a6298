-- semaphores/resize.lua (common/time, common/waiters, semaphores/common
-- prepended): change the limit while permits are held.
--
-- KEYS[1] state, KEYS[2] holders, KEYS[3] queue, KEYS[4] index, KEYS[5] first (see acquire.lua)
-- ARGV[1] permits  the new limit (1 or more); it applies to every caller until
--                  the semaphore has been unused for SEM_KEEP_MS
-- ARGV[2] name     the semaphore's name
--
-- Holders above a lower limit keep their permits until they release them;
-- a higher limit hands the new permits to waiters at once.
-- Returns {held, handed}.

local state, holders, queue, index, first = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local permits, name = tonumber(ARGV[1]), ARGV[2]

local clock = lazy_clock_us()
local now_ms = math.floor(clock() / 1000)
prune(state, holders, now_ms)
redis.call('HSET', state, 'permits', permits)
if redis.call('PTTL', state) < SEM_KEEP_MS then
  redis.call('PEXPIRE', state, SEM_KEEP_MS)
end
local meta = read_meta(state)
local handed, _, held = fill(state, holders, queue, index, name, meta, permits, clock, nil, first)
return {held, handed}
