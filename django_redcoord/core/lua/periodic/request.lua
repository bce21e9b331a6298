-- periodic/request.lua (common/time.lua prepended): queue a "run now" request for the leader of an election.
--
-- KEYS[1] requests  hash: request id -> JSON {"job", "slot_ms", "requested_ms", "expires_ms", "by"};
--                   numbers are decimal strings (cjson writes 14 significant digits at most),
--                   slot_ms is '' for a run without a slot. The hash expires with its
--                   longest-lived request, so requests nobody claims never linger.
-- ARGV[1] id        the new request's id (random, chosen by the caller; a hash field, never split)
-- ARGV[2] job       the job's name (stored whole: names may contain '|' and ':')
-- ARGV[3] slot_ms   the slot the run is for, ms since the epoch, or '' for none
-- ARGV[4] ttl_ms    how long the request waits for a leader to claim it, ms
-- ARGV[5] by        who asked (free text, for the logs and the admin)
-- ARGV[6] limit     most requests that may be pending at once in this election
--
-- Requests past their expiry are deleted first (at most `limit` entries are read).
-- Returns {1, expires_ms}  queued
--         {0, pending}     refused: `limit` requests are pending; nothing written

local requests = KEYS[1]
local id, job, slot, ttl, by, limit = ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4]), ARGV[5], tonumber(ARGV[6])

local now = server_now_ms()
local pending = 0
local entries = redis.call('HGETALL', requests)
for i = 1, #entries, 2 do
  local ok, request = pcall(cjson.decode, entries[i + 1])
  if not ok or type(request) ~= 'table' or (tonumber(request.expires_ms) or 0) <= now then
    redis.call('HDEL', requests, entries[i])
  else
    pending = pending + 1
  end
end
if pending >= limit then
  return {0, pending}
end

local expires = now + ttl
redis.call('HSET', requests, id, cjson.encode({
  job = job, slot_ms = slot, requested_ms = int(now), expires_ms = int(expires), by = by,
}))
if redis.call('PTTL', requests) < ttl then
  redis.call('PEXPIRE', requests, ttl)
end
return {1, int(expires)}
