-- latches/barrier_common.lua: helpers of the barrier scripts (prepended after
-- common/time.lua and common/broadcast.lua).
--
-- A barrier is, under its {name} hash tag:
--   state    hash: gen (its generation: +1 at every trip or reset), broken (why,
--            absent while whole), broken_gen (the generation it broke in),
--            reset_gen (the last generation reset), epoch (server time in us
--            when this state was created: a waiting party that saw another
--            epoch knows Redis lost the barrier's data), and per party
--            that arrived in this generation 'a:<token>' -> cmsgpack {token,
--            host, pid, thread}
--   parties  zset: token of a party that arrived -> lease expiry (ms): a party
--            renews it at every re-check while it waits; one that stops (it
--            died) breaks the barrier
--   waiters  zset: unused by barriers
--   wake     stream: the arrived parties' wake-ups (common/broadcast.lua; its own TTL)
--   index    hash (shared): barrier name -> a bound on when it was last used (s)

-- Why a barrier breaks when Redis lost its data under its waiting parties.
local BARRIER_LOST = 'Redis lost the barrier\'s data (a restart without persistence, a failover to a '
  .. 'replica that did not have it, or eviction): the arrivals made before cannot be known'

-- The barrier's epoch (created with its state), and whether it was created now.
local function barrier_epoch(state)
  local epoch = redis.call('HGET', state, 'epoch')
  if not epoch then
    local t = redis.call('TIME')
    epoch = t[1] .. string.format('%06d', tonumber(t[2]))
    redis.call('HSET', state, 'epoch', epoch)
    return epoch, true
  end
  return epoch, false
end

local function barrier_keep(state, parties, index, name, keep_ms, now_ms)
  redis.call('PEXPIRE', state, keep_ms)
  redis.call('PEXPIRE', parties, keep_ms)
  index_put(index, name, math.ceil((now_ms + keep_ms) / 1000), now_ms)
end

-- Wake every arrived party (one entry on the wake stream saying `value`), and
-- forget the arrivals of this generation.
local function wake_arrived(state, parties, wake, value)
  for _, t in ipairs(redis.call('ZRANGE', parties, 0, -1)) do
    redis.call('HDEL', state, 'a:' .. t)
  end
  redis.call('DEL', parties)
  wake_up(wake, value, '*')
end

-- Break the barrier in this generation (once) and wake every arrived party.
local function barrier_break(state, parties, wake, reason)
  if redis.call('HSETNX', state, 'broken', reason) == 1 then
    redis.call('HSET', state, 'broken_gen', redis.call('HGET', state, 'gen') or '0')
    wake_arrived(state, parties, wake, 'broken')
  end
end

-- An arrived party whose lease ran out died while waiting: the barrier breaks.
local function prune_arrived(state, parties, wake, now_ms)
  local dead = redis.call('ZRANGEBYSCORE', parties, '-inf', '(' .. now_ms, 'LIMIT', 0, 1)
  if dead[1] then
    local why = 'a party stopped waiting (its lease ran out)'
    local raw = redis.call('HGET', state, 'a:' .. dead[1])
    if raw then
      local ok, rec = pcall(cmsgpack.unpack, raw)
      if ok and type(rec) == 'table' then
        why = 'party ' .. tostring(rec[2]) .. ' pid ' .. tostring(rec[3]) .. ' thread ' .. tostring(rec[4])
              .. ' stopped renewing its lease while waiting (it died or was paused)'
      end
    end
    barrier_break(state, parties, wake, why)
  end
end

local function next_arrival_expiry(parties, now_ms)
  local first = redis.call('ZRANGE', parties, 0, 0, 'WITHSCORES')
  if first[2] then return math.max(1, tonumber(first[2]) - now_ms) end
  return 0
end
