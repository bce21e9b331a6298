-- common/index.lua: the admin's name indexes, shared by the families (prepended to every
-- script after common/time.lua; it touches only the index key its caller names).
--
-- An index is a hash: name -> a bound, in whole seconds of the server's clock, on when the
-- name is last in use (its keys expire by then, unless used again). An entry whose bound has
-- passed is dead: readers skip it, and the scripts that write an index drop the dead ones
-- among a few random entries as they go, so an index holds about its live names (at most
-- about half as many again, whatever the rate of new names or of crashed
-- holders); the hash itself expires after its latest bound, so an index nobody writes any
-- more goes too.

-- Drop the dead entries (bound before now_ms) among `probe` random entries of `index`.
local function index_prune(index, now_ms, probe)
  local sample = redis.call('HRANDFIELD', index, probe, 'WITHVALUES')
  local dead = {}
  for i = 1, #sample, 2 do
    local bound = tonumber(sample[i + 1])
    if bound and bound * 1000 < now_ms then dead[#dead + 1] = sample[i] end
  end
  if #dead > 0 then redis.call('HDEL', index, unpack(dead)) end
end

-- Keep `index` (a hash with an entry bounded by bound_s) until a second past bound_s at
-- least: pushed out, never shortened (no PEXPIREAT GT on Redis 6.2).
local function index_outlives(index, bound_s, now_ms)
  local at = (bound_s + 1) * 1000
  local left = redis.call('PTTL', index)
  if left == -1 or now_ms + left < at then redis.call('PEXPIREAT', index, at) end
end

-- Write `name`'s entry in `index` with bound bound_s (s), drop the dead among 3 random
-- entries, and keep the hash past its latest bound.
local function index_put(index, name, bound_s, now_ms)
  redis.call('HSET', index, name, bound_s)
  index_prune(index, now_ms, 3)
  index_outlives(index, bound_s, now_ms)
end
