-- ratelimit/hit.lua (common/time and ratelimit/common prepended): decide a request against every
-- policy of a limiter at once, on the server's clock; count it only if all
-- of them let it through.
--
-- KEYS[1] state    hash of one (limiter, key): 'g<i>' -> the theoretical
--                  arrival time (ms) of GCRA policy i; 'w<i>:<n>' -> hits in
--                  window n of sliding-window policy i
-- KEYS[2] inflight zset: concurrency slot token -> lease expiry (ms)
-- KEYS[3] top      zset (per limiter): key -> hits this minute of the server's
--                  clock, for the admin (see ratelimit/common.lua)
-- KEYS[4] before   zset: the same for the minute before
-- KEYS[5] index    hash: limiter name -> its policies (the admin's list)
-- ARGV[1] mode     'hit' decide and count | 'peek' decide only
-- ARGV[2] cost     how much the request counts (GCRA, window)
-- ARGV[3] member   the key as the admin shows it ('' not to track it)
-- ARGV[4] token    the concurrency slot's token ('' when no concurrency policy)
-- ARGV[5] name     the limiter's name (for the index)
-- ARGV[6] policies the limiter's policies as text (for the index)
-- ARGV[7] n        how many policies follow, 4 values each:
--                  kind ('g' GCRA | 'w' sliding window | 'c' concurrency),
--                  limit, period_ms (the lease for 'c'), burst
--
-- Returns {allowed (1|0), the first denying policy (1-based, 0: none),
--          then per policy: remaining, reset_ms, retry_ms}.
-- GCRA: at most burst + elapsed/interval in any span (exact). Sliding window:
-- the previous window weighted by how much of it the sliding window still
-- covers, plus the current one (at most `limit` within any fixed window).
-- Concurrency: at most `limit` live leases.

local state, inflight, top, before = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local mode, cost, member, token = ARGV[1], tonumber(ARGV[2]), ARGV[3], ARGV[4]
local n = tonumber(ARGV[7])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000

local allowed, denied_by = 1, 0
local out = {}
local writes, ttl_ms, lease_ms = {}, 0, 0

for i = 1, n do
  local base = 7 + (i - 1) * 4
  local kind, limit, period, burst = ARGV[base + 1], tonumber(ARGV[base + 2]), tonumber(ARGV[base + 3]), tonumber(ARGV[base + 4])
  local remaining, reset, retry, ok = 0, 0, 0, true
  if kind == 'g' then
    local interval = period / limit
    local tolerance = burst * interval
    local field = 'g' .. i
    local pass, new, tat = gcra(tonumber(redis.call('HGET', state, field)), now, interval, tolerance, cost)
    if pass then
      remaining = math.floor((tolerance - (new - now)) / interval + 0.0001)
      reset = new - now
      table.insert(writes, {'HSET', field, string.format('%.3f', new)})
      ttl_ms = math.max(ttl_ms, new - now)
    else
      ok = false
      -- fewer than `cost` remain, or it would have passed (gcra's 1 us slack
      -- could otherwise round a refused request's remaining up to it)
      remaining = math.min(cost - 1, math.max(0, math.floor((tolerance - (tat - now)) / interval + 0.0001)))
      reset, retry = tat - now, new
    end
  elseif kind == 'w' then
    local number = math.floor(now / period)
    local elapsed = now - number * period
    local cur = tonumber(redis.call('HGET', state, 'w' .. i .. ':' .. number)) or 0
    local prev = tonumber(redis.call('HGET', state, 'w' .. i .. ':' .. (number - 1))) or 0
    local estimate = prev * (period - elapsed) / period + cur
    reset = period - elapsed
    if estimate + cost <= limit then
      remaining = math.floor(limit - estimate - cost)
      table.insert(writes, {'HINCRBY', 'w' .. i .. ':' .. number, cost})
      table.insert(writes, {'HDEL', 'w' .. i .. ':' .. (number - 2)})
      ttl_ms = math.max(ttl_ms, 2 * period)
    else
      ok = false
      remaining = math.max(0, math.floor(limit - estimate))
      if cur + cost <= limit and prev > 0 then
        -- later in this window, the previous one weighs less
        retry = (period - elapsed) - (limit - cur - cost) * period / prev
      else
        -- in the next window, this one (cur) is the previous
        retry = (period - elapsed) + math.max(0, period - (limit - cost) * period / math.max(cur, 1))
      end
    end
  else -- 'c'
    local live = redis.call('ZCOUNT', inflight, now, '+inf')
    if live + 1 <= limit then
      remaining = limit - live - 1
      table.insert(writes, {'ZADD', now + period, token})
      lease_ms = math.max(lease_ms, period)
    else
      ok = false
      local first = redis.call('ZRANGEBYSCORE', inflight, now, '+inf', 'WITHSCORES', 'LIMIT', 0, 1)
      retry = first[2] and (tonumber(first[2]) - now) or 0
    end
    reset = retry
  end
  if not ok and allowed == 1 then
    allowed, denied_by = 0, i
  end
  table.insert(out, remaining)
  table.insert(out, math.ceil(math.max(reset, 0)))
  table.insert(out, ok and 0 or math.max(1, math.ceil(retry)))
end

if mode == 'hit' then
  if allowed == 1 then
    for _, w in ipairs(writes) do
      if w[1] == 'ZADD' then
        redis.call('ZADD', inflight, w[2], w[3])
      elseif w[1] == 'HDEL' then
        redis.call('HDEL', state, w[2])
      else
        redis.call(w[1], state, w[2], w[3])
      end
    end
    if ttl_ms > 0 then redis.call('PEXPIRE', state, math.ceil(ttl_ms) + 1000) end
    if lease_ms > 0 then
      redis.call('ZREMRANGEBYSCORE', inflight, '-inf', '(' .. now)
      redis.call('PEXPIRE', inflight, math.ceil(lease_ms) + 1000)
    end
  end
  if member ~= '' then count_hit(now, top, before, member, cost, KEYS[5], ARGV[5], ARGV[6]) end
end
return {allowed, denied_by, unpack(out)}
