-- common/time.lua: server time and ever-growing counters, shared by every family
-- (prepended to the scripts that include it; it touches no key of its own).
--
-- Times are the Redis server's clock (TIME): clients never compare their own.

local function server_now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

-- The server time, read at most once per script run: `now()` inside a script.
local function lazy_now()
  local cached
  return function()
    if not cached then cached = server_now_ms() end
    return cached
  end
end

-- The server time in microseconds, read at most once per script run.
local function lazy_clock_us()
  local cached
  return function()
    if not cached then
      local t = redis.call('TIME')
      cached = tonumber(t[1]) * 1000000 + tonumber(t[2])
    end
    return cached
  end
end

-- A number as an integer string: Lua turns numbers into strings with 14
-- significant digits, which would round a 16-digit value.
local function int(n)
  return string.format('%.0f', n)
end

-- Next value of a counter that must only grow (fencing tokens, terms), even
-- when Redis loses the key (restart without persistence, failover to a replica
-- that missed writes, eviction): a hybrid logical clock,
--   next = max(last + 1, server time in microseconds).
-- Without the key, the clock alone is above every value issued before, as long
-- as the server's clock has not gone back by more than the time since the last
-- one was issued. The key only carries "+1" within the same microsecond (and
-- across a clock step back while it lives), so it may expire: `keep_ms`.
-- Values stay below 2^53 (exact in Lua's doubles) until the year 2255.
local function next_monotonic(key, keep_ms)
  local t = redis.call('TIME')
  local now_us = tonumber(t[1]) * 1000000 + tonumber(t[2])
  local last = tonumber(redis.call('GET', key) or '0') or 0
  local value = math.max(last + 1, now_us)
  redis.call('SET', key, int(value), 'PX', keep_ms)
  return value
end

-- Redis full (maxmemory reached under noeviction): Redis refuses a script at its
-- first write that may take memory (SET, HSET, ZADD, RPUSH...), and runs the rest
-- of a script whose first write took none (DEL, HDEL, ZREM, PEXPIRE...). A script
-- that only keeps or gives up what its caller holds (a renewal, a release, a
-- heartbeat) calls this before its first such write, so that a full Redis never
-- takes a hold from its holder (a renewal refused) nor leaves one held by nobody
-- (a release refused); what takes something new is refused whole, an outage.
-- It is a write that changes nothing and takes no memory: `key` (a key of the
-- script, of any type, or none) keeps its TTL (PEXPIRE to what is left) or stays
-- without one (PERSIST of a key that has none).
local function run_when_full(key)
  local pttl = redis.call('PTTL', key)
  if pttl > 0 then redis.call('PEXPIRE', key, pttl) else redis.call('PERSIST', key) end
end
