-- redlock/guard.lua (common/time.lua, common/waiters.lua, locks/common.lua prepended; locks/acquire.lua
-- follows it): a quorum lock's acquire on one master, which refuses while the master may have forgotten
-- grants. Redlock's "delayed restart": a master that restarted (with or without its data) or lost its
-- data otherwise grants nothing for one max TTL, so every grant it may have forgotten has expired on
-- the other masters before it grants again (else it and the masters that were down at that grant form
-- a new majority: the lock is granted twice).
--
-- KEYS[1..6]  as for locks/acquire.lua (lock, queue, index, waits, windex, wake)
-- KEYS[7] boot        string, no TTL: "<run_id> <lost_ms>": the server process a quorum lock saw last
--                     (INFO server run_id) and the server time (ms) from which it may have forgotten
--                     grants (0: nothing forgotten, see redlock/trust.lua)
-- ARGV[1..9]  as for locks/acquire.lua
-- ARGV[10] max_ttl_ms the longest TTL of any quorum lock on these masters (REDLOCK_MAX_TTL), ms
--
-- Returns {2, wait_ms} when this master refuses (for wait_ms more), else what locks/acquire.lua
-- returns. What it finds:
--   no boot key        first use, or the data is gone. A restart without persistence: from its start
--                      (uptime), as for another run_id below, so a master that has run for longer than
--                      max TTL grants at its first use (adding REDLOCK to servers already running costs no
--                      wait). If the server flushed or swapped databases (FLUSHALL/FLUSHDB/SWAPDB in INFO
--                      commandstats), evicted keys, or took its data from a master (a full resync as a
--                      replica: INFO replication's second_repl_offset is set once it was one) since its
--                      start, the data may have gone at any moment: from now
--   another run_id     restarted with its data (RDB/AOF): the writes after its last fsync may be gone,
--                      from its start (uptime less one second: the latest the start can be, see below);
--                      from now if it took its data from a master since (the record came with it)
--   the same run_id    refuse until lost_ms + max_ttl_ms
-- INFO and TIME are read on every call (a few microseconds): a restart is seen on the first call after it.

-- Whether this server was a replica since its start (its data then came from a master, by a full
-- resync at any moment): a promoted replica keeps its old replication id as master_replid2, with
-- second_repl_offset set (-1 on a server that never was one).
local function was_replica()
  local repl = redis.call('INFO', 'replication')
  return string.match(repl, 'role:slave') ~= nil or (tonumber(string.match(repl, 'second_repl_offset:(%-?%d+)')) or -1) ~= -1
end

local function redlock_guard(boot, max_ttl)
  local info = redis.call('INFO', 'server')
  local run_id = string.match(info, 'run_id:(%x+)')
  local now = server_now_ms()
  local seen, lost
  local record = redis.call('GET', boot)
  if record then
    seen, lost = string.match(record, '^(%x+) (%d+)$')
  end
  -- uptime is the difference of two whole-second clock readings (now and the start, each rounded
  -- down), not the real uptime rounded down: a server started at x.95 s reads 1 at (x+1).0, 0.05 s
  -- later. So the real start is at most uptime - 1 seconds ago; taking that (the latest it can be)
  -- the refusal never ends before one max TTL after the real start (it may last a second longer)
  local uptime = tonumber(string.match(info, 'uptime_in_seconds:(%d+)')) or 0
  local started = now - math.max(0, uptime - 1) * 1000
  if not seen then
    local stats = redis.call('INFO', 'stats') .. redis.call('INFO', 'commandstats')
    local flushed = string.match(stats, 'cmdstat_flushall:calls=(%d+)') or string.match(stats, 'cmdstat_flushdb:calls=(%d+)')
      or string.match(stats, 'cmdstat_swapdb:calls=(%d+)')
    local evicted = tonumber(string.match(stats, 'evicted_keys:(%d+)')) or 0
    if flushed or evicted > 0 or was_replica() then
      lost = now
    else
      lost = started
    end
    redis.call('SET', boot, run_id .. ' ' .. int(lost))
  elseif seen ~= run_id then
    lost = was_replica() and now or started
    redis.call('SET', boot, run_id .. ' ' .. int(lost))
  else
    lost = tonumber(lost)
  end
  local wait = lost + max_ttl - now
  if wait > 0 then
    return {2, wait}
  end
  return nil
end

local refused = redlock_guard(KEYS[7], tonumber(ARGV[10]))
if refused then
  return refused
end
