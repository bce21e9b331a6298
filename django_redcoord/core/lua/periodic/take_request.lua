-- periodic/take_request.lua (common/time.lua prepended): claim a "run now" request for the leader of a term.
--
-- KEYS[1] record    leader hash: identity, token, term, ... (see leader/campaign.lua)
-- KEYS[2] requests  hash: request id -> JSON request (see periodic/request.lua)
-- KEYS[3] job       job state hash (see periodic/claim.lua); gets last_request (the request id)
-- KEYS[4] jobs      set: names of the jobs with state under this election (for the admin)
-- ARGV[1] token     the caller's term token
-- ARGV[2] term      the caller's term
-- ARGV[3] id        the request's id
-- ARGV[4] name      the job's name, as the caller read it from the request (member of KEYS[4])
-- ARGV[5] schedule  the job's schedule in words (for the admin)
-- ARGV[6] identity  the caller's identity (`runner`)
--
-- The request is deleted by the claim itself: whichever term claims it first is the
-- only one that ever runs it. A claim whose reply is lost loses that run (at most once).
-- `last_slot` is never touched: a requested run does not move the schedule.
--
-- Returns {1, run_id}  claimed: run_id is 'request-<id>', the job is marked running
--         {0, ''}      the caller is not the leader of ARGV[2]: nothing written
--         {2, ''}      no such request (claimed by another term, or cancelled): nothing written
--         {3, ''}      the request had expired: deleted, not run
--         {4, ''}      the request names another job than ARGV[4]: nothing written

local record, requests, job, jobs = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local token, term, id, name = ARGV[1], ARGV[2], ARGV[3], ARGV[4]

-- The fence, as for slots: a leader paused past its lease resumes with a
-- token the record no longer holds, and can claim nothing.
local lead = redis.call('HMGET', record, 'token', 'term')
if lead[1] ~= token or lead[2] ~= term then
  return {0, ''}
end

local raw = redis.call('HGET', requests, id)
if not raw then
  return {2, ''}
end
local now = server_now_ms()
local ok, request = pcall(cjson.decode, raw)
if not ok or type(request) ~= 'table' or (tonumber(request.expires_ms) or 0) <= now then
  redis.call('HDEL', requests, id)
  return {3, ''}
end
if request.job ~= name then
  return {4, ''}
end

redis.call('HDEL', requests, id)
local run_id = 'request-' .. id
redis.call('SADD', jobs, name)
redis.call('HSET', job, 'schedule', ARGV[5], 'running', run_id, 'running_since', now, 'running_term', term,
           'runner', ARGV[6], 'last_start', now, 'last_request', id)
redis.call('HINCRBY', job, 'runs', 1)
return {1, run_id}
