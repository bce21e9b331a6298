-- leader/resign.lua (common/time.lua prepended): give up leadership and wake a standby at once.
--
-- KEYS[1] record         hash: identity, token, term, since_ms, renewed_ms, lease_ms
-- KEYS[2] notify         list standbys block on (BLPOP) between campaigns
-- ARGV[1] token          token of the term the caller leads
-- ARGV[2] notify_ttl_ms  how long the wake-up stays in the list if nobody is blocked, milliseconds
--
-- Returns 1 resigned (record deleted, the ended term pushed onto notify),
--         0 not ours (expired or held by another candidate): nothing touched.

local record, notify = KEYS[1], KEYS[2]
local token, ttl = ARGV[1], tonumber(ARGV[2])

if redis.call('HGET', record, 'token') ~= token then
  return 0
end
local term = redis.call('HGET', record, 'term')
redis.call('DEL', record)
-- One element wakes one blocked standby: it campaigns and wins; the others
-- see the new leader at their next campaign (no thundering herd). The
-- short expiry keeps a wake-up nobody took from lingering.
redis.call('LPUSH', notify, term)
redis.call('LTRIM', notify, 0, 7)
redis.call('PEXPIRE', notify, ttl)
return 1
