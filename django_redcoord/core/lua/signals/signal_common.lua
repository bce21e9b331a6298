-- signals/signal_common.lua: the deliveries of a signal (prepended after
-- common/time, common/waiters and common/broadcast).
--
-- A signal is, under its {name} hash tag:
--   queue       list: waiter entries, oldest first (common/waiters.lua)
--   deliveries  hash: waiter token -> cmsgpack {{id, payload}, ...}: the
--               signals sent to that waiter and not yet confirmed taken. A
--               waiter's look returns its first one; its next call names that
--               id, which removes it (so a reply lost with a dropped
--               connection is returned again, never lost, never twice)
--               Field ORPHANS holds the signals a waiter interrupted before taking
--               them passed on while nobody else waited: the next waiter takes them
--   due         zset: waiter token -> when its deliveries are forgotten (ms):
--               WAKE_KEEP_MS after they were sent or last returned
--   wake        stream: one entry per send() (naming its recipient) or
--               broadcast() ('*'); every waiter reads it (common/broadcast.lua)
--   index       hash (shared): signal name -> a bound on when it was last used (s)
-- Every key of a signal expires on its own (no key without a TTL).

-- The deliveries field of signals passed on with no waiter to take them (not a token:
-- tokens are URL-safe base64).
local ORPHANS = '!'

-- Forget the deliveries of waiters that never came back for them (at most
-- 32 per call: each is forgotten once, so the work is spread over the calls).
local function prune_deliveries(deliveries, due, now_ms)
  local gone = redis.call('ZRANGEBYSCORE', due, '-inf', '(' .. now_ms, 'LIMIT', 0, 32)
  for _, t in ipairs(gone) do
    redis.call('HDEL', deliveries, t)
    redis.call('ZREM', due, t)
  end
end

-- The deliveries of `token` (a list of {id, payload}, oldest first).
local function deliveries_of(deliveries, token)
  local raw = redis.call('HGET', deliveries, token)
  if raw then
    local ok, list = pcall(cmsgpack.unpack, raw)
    if ok and type(list) == 'table' then return list end
  end
  return {}
end

-- Store `list` as `token`'s deliveries, kept WAKE_KEEP_MS from now.
local function keep_deliveries(deliveries, due, token, list, now_ms)
  if #list == 0 then
    redis.call('HDEL', deliveries, token)
    redis.call('ZREM', due, token)
    return
  end
  redis.call('HSET', deliveries, token, cmsgpack.pack(list))
  redis.call('ZADD', due, now_ms + WAKE_KEEP_MS, token)
  redis.call('PEXPIRE', deliveries, WAKE_KEEP_MS)
  redis.call('PEXPIRE', due, WAKE_KEEP_MS)
end
