-- latches/common.lua: helpers of the count-down latch scripts (prepended after
-- common/time.lua and common/broadcast.lua).
--
-- A count-down latch is, under its {name} hash tag:
--   state    hash: count (still to count down), initial, broken (why it broke,
--            absent while whole), fence, ib (the index bound, s), epoch (server
--            time in us when this state was created: a waiter that saw another
--            epoch knows Redis lost the latch's data meanwhile), 'd:<token>' per
--            party that counted down or gave up (a tombstone), and per party
--            'p:<token>' -> cmsgpack {token, fence, expires_ms, host, pid, thread}
--   parties  zset: party token -> lease expiry (ms): a party that joined must
--            renew its lease until it counts down; if it stops (it died), the
--            latch breaks and every waiter learns it at once
--   waiters  zset: waiter token -> registration deadline (common/broadcast.lua)
--   wake     stream: the waiters' wake-ups (common/broadcast.lua; its own TTL)
--   index    hash (shared): latch name -> a bound on when it is last used (s)
-- Every key expires `keep_ms` after the last call that touched it.

-- Why a latch breaks when Redis lost its data under its waiters or parties.
local LATCH_LOST = 'Redis lost the latch\'s data (a restart without persistence, a failover to a '
  .. 'replica that did not have it, or eviction): the count-downs made before cannot be known'

-- The state (initialising the count on first use); returns count, broken, epoch.
local function latch_state(state, initial)
  local m = redis.call('HMGET', state, 'count', 'broken', 'epoch')
  local count = tonumber(m[1])
  if not count then
    count = tonumber(initial)
    local t = redis.call('TIME')
    m[3] = t[1] .. string.format('%06d', tonumber(t[2]))
    redis.call('HSET', state, 'count', count, 'initial', count, 'epoch', m[3])
  end
  return count, m[2], m[3] or ''
end

-- Keep every key of the latch for `keep_ms` more, and its index entry.
local function latch_keep(state, parties, waiters, index, name, keep_ms, now_ms)
  for _, key in ipairs({state, parties, waiters}) do
    redis.call('PEXPIRE', key, keep_ms)
  end
  index_put(index, name, math.ceil((now_ms + keep_ms) / 1000), now_ms)
end

-- True once the latch opened (its count reached zero): open stays open.
local function latch_open(state)
  local count = tonumber(redis.call('HGET', state, 'count'))
  return count ~= nil and count <= 0
end

-- Break the latch (once): record why and wake every waiter. An open latch
-- stays open (a surplus party that fails or dies after it opened breaks nothing).
local function latch_break(state, waiters, wake, reason, now_ms)
  if latch_open(state) then return end
  if redis.call('HSETNX', state, 'broken', reason) == 1 then
    broadcast(waiters, wake, 'broken', now_ms)
  end
end

-- A joined party whose lease ran out died before counting down: the latch
-- breaks (once it is open, the dead surplus parties are just forgotten).
local function prune_parties(state, parties, waiters, wake, now_ms)
  if latch_open(state) then
    for _, t in ipairs(redis.call('ZRANGEBYSCORE', parties, '-inf', '(' .. now_ms)) do
      redis.call('ZREM', parties, t)
      redis.call('HDEL', state, 'p:' .. t)
    end
    return
  end
  local dead = redis.call('ZRANGEBYSCORE', parties, '-inf', '(' .. now_ms, 'LIMIT', 0, 1)
  if dead[1] then
    local why = 'a party stopped renewing its lease before counting down'
    local raw = redis.call('HGET', state, 'p:' .. dead[1])
    if raw then
      local ok, rec = pcall(cmsgpack.unpack, raw)
      if ok and type(rec) == 'table' then
        why = 'party ' .. tostring(rec[4]) .. ' pid ' .. tostring(rec[5]) .. ' thread ' .. tostring(rec[6])
              .. ' stopped renewing its lease before counting down (it died or was paused)'
      end
    end
    latch_break(state, waiters, wake, why, now_ms)
  end
end

-- Ms until the earliest party lease runs out (when a waiter must re-check), or
-- 0 when there is none (at least 1 while one is live: 0 means a whole chunk).
local function next_party_expiry(parties, now_ms)
  local first = redis.call('ZRANGE', parties, 0, 0, 'WITHSCORES')
  if first[2] then return math.max(1, tonumber(first[2]) - now_ms) end
  return 0
end
