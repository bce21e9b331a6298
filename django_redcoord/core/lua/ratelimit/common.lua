-- ratelimit/common.lua: what the rate-limit scripts share (included after
-- common/time; it takes no keys or arguments of its own).

-- Count `cost` hits of `member` (the key as the admin shows it) in `top`,
-- the zset of this minute of the server's clock; `before` keeps the minute
-- before for the admin. Member '' (never a key) is scored minus the minute
-- its zset counts: when the minute turns, the first hit moves `top` to
-- `before` (or drops both when `top` is older than that) and starts afresh.
-- A zset lives 3 minutes from the first hit of its minute, so `before` stays
-- through the next minute at least. Each minute's first hit also names the
-- limiter in `index` (name -> policies, the admin's list of limiters), so a
-- limiter is listed without a round trip of its own, also after Redis lost it.
local function count_hit(now_ms, top, before, member, cost, index, name, policies)
  local minute = math.floor(now_ms / 60000)
  local counts = tonumber(redis.call('ZSCORE', top, ''))
  if counts ~= -minute then
    if counts == -(minute - 1) then
      redis.call('RENAME', top, before)
    else
      redis.call('DEL', top, before)
    end
    redis.call('ZADD', top, -minute, '')
    redis.call('PEXPIRE', top, 180000)
    redis.call('HSET', index, name, policies)
  end
  redis.call('ZINCRBY', top, cost, member)
end

-- GCRA (the generic cell rate algorithm): may `cost` more pass at `now`
-- (ms), given the theoretical arrival time `tat` (nil: none yet), one cell
-- every `interval` ms and `tolerance` ms of burst? Returns ok, then the new
-- tat when ok, else the ms to wait until it would pass, then the tat as
-- read (never before now). Shared by ratelimit/hit.lua and the claims of
-- rate-limited groups (queues/claim.lua).
local function gcra(tat, now, interval, tolerance, cost)
  tat = math.max(tat or now, now)
  local new = tat + cost * interval
  if new - now <= tolerance + 0.001 then return true, new, tat end
  return false, new - tolerance - now, tat
end
