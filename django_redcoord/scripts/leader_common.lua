-- leader_common.lua: helpers shared by the leader and job scripts (prepended to them).
--
-- Keys and arguments are those of the script that includes this file.
-- Times are the Redis server's clock (TIME), milliseconds since the epoch:
-- candidates never compare their own clocks.

local function server_now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
