-- periodic/claim.lua (common/time.lua prepended): claim one slot of a periodic job for the leader of a term.
--
-- KEYS[1] record    leader hash: identity, token, term, ... (see leader/campaign.lua)
-- KEYS[2] job       job state hash:
--                     last_slot, next_due, last_start, last_end (ms since the epoch),
--                     duration (ms), outcome (ok|error|timeout), error, runs, failures,
--                     missed, running (run id), running_since, running_term, runner,
--                     claim (token:mode of the last claim), finished_run, schedule,
--                     paused (ms since the epoch; set by periodic/pause.lua), paused_slots,
--                     last_request (see periodic/take_request.lua),
--                     schedule_version (the edit version of the last claim; see below),
--                     schedule_edit (see periodic/edit_schedule.lua)
-- KEYS[3] jobs      set: names of the jobs with state under this election (for the admin)
-- KEYS[4] schedule  hash: the job's schedule edits (see periodic/edit_schedule.lua); read only
-- ARGV[1] token     the caller's term token
-- ARGV[2] term      the caller's term
-- ARGV[3] name      the job's name (member of KEYS[3])
-- ARGV[4] mode      'run'    claim slot ARGV[5] and mark it running
--                   'skip'   move last_slot to ARGV[5] without running it (slots dropped
--                            by misfire='skip', or the starting point of a new job)
--                   'adhoc'  an ad-hoc run outside the schedule: last_slot untouched
-- ARGV[5] slot_ms   the slot, ms since the epoch (ignored for 'adhoc')
-- ARGV[6] next_due  when the slot after ARGV[5] is due, ms since the epoch (for the admin)
-- ARGV[7] missed    slots skipped or folded into this claim (added to `missed`)
-- ARGV[8] schedule  the job's schedule in words (for the admin)
-- ARGV[9] identity  the caller's identity (`runner`)
-- ARGV[10] version  the schedule version the caller computed ARGV[5] from (0: the code-declared
--                   schedule; ignored for 'adhoc')
-- ARGV[11] since    when that version took effect as the caller read it (since:<v>, ms since the
--                   epoch; '' for version 0): a version number Redis forgot and gave again (data
--                   lost, then a new edit) is not the one the caller computed from
--
-- Returns {1, run_id}     claimed (also when the same token claims the same slot again:
--                         a retry after a lost reply gets the same grant back)
--         {0, ''}         the caller is not the leader of ARGV[2] (term over, or another
--                         candidate leads): nothing written
--         {2, last_slot}  the slot was already claimed (slot <= last_slot): nothing written
--         {3, slot}       mode 'run' while the job is paused: the slot is claimed but not
--                         run (last_slot moves; it and the slots folded into it count in
--                         `missed` and `paused_slots`)
--         {4, version}    the slot is not one of version ARGV[10]'s: that version is not
--                         kept any more (or is another edit than the caller's, by its
--                         since), or the slot lies outside its window (an edit landed
--                         before the slot; for 'run' also: the slot is not after the edit
--                         took effect); `version` is the newest: nothing written, the caller
--                         reads the edits again and recomputes
--
-- The version check is what keeps an edit consistent with the claims: version v is in force
-- for the slots s with since:<v> < s <= since:<v+1>. A leader that computed a slot from an
-- old schedule (its read of the edits is stale, or the reply of its last read was lost)
-- cannot claim a slot after the edit took effect, so it can neither run a slot of a
-- replaced schedule nor move last_slot over slots of the new one.

local record, job, jobs, schedule = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local token, term, name, mode = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
local slot, next_due, missed = tonumber(ARGV[5]), ARGV[6], tonumber(ARGV[7])
local version = tonumber(ARGV[10])

-- The fence: only the current leader of this very term may claim. A leader
-- that was paused past its lease resumes with an old token and term.
local lead = redis.call('HMGET', record, 'token', 'term')
if lead[1] ~= token or lead[2] ~= term then
  return {0, ''}
end

local now = server_now_ms()

if mode == 'adhoc' then
  redis.call('SADD', jobs, name)
  redis.call('HSET', job, 'schedule', ARGV[8])
  local run_id = 'adhoc-' .. now
  redis.call('HSET', job, 'running', run_id, 'running_since', now, 'running_term', term,
             'runner', ARGV[9], 'last_start', now)
  redis.call('HINCRBY', job, 'runs', 1)
  return {1, run_id}
end

local last_raw = redis.call('HGET', job, 'last_slot')
local last = tonumber(last_raw)
if last and slot <= last then
  if slot == last and mode == 'run' and redis.call('HGET', job, 'claim') == token .. ':run' then
    return {1, ARGV[5]}  -- our own claim, retried after a lost reply
  end
  return {2, last_raw}
end

local meta = redis.call('HMGET', schedule, 'version', 'first')
local head, first = tonumber(meta[1]) or 0, tonumber(meta[2]) or 0
if not version or version < first or version > head then
  return {4, head}
end
if version < head then
  local ends = tonumber(redis.call('HGET', schedule, 'since:' .. (version + 1)))
  if not ends or slot > ends then
    return {4, head}
  end
end
if version > 0 then
  local starts = redis.call('HGET', schedule, 'since:' .. version)
  if starts ~= ARGV[11] or (mode == 'run' and slot <= tonumber(starts)) then
    return {4, head}
  end
end

redis.call('SADD', jobs, name)
redis.call('HSET', job, 'schedule', ARGV[8])

if mode == 'run' and redis.call('HEXISTS', job, 'paused') == 1 then
  -- Checked in the claim itself: a pause that lands before the claim skips
  -- the slot, one that lands after it lets that run go on.
  redis.call('HSET', job, 'last_slot', ARGV[5], 'next_due', next_due, 'claim', token .. ':paused',
             'schedule_version', version)
  redis.call('HINCRBY', job, 'missed', missed + 1)
  redis.call('HINCRBY', job, 'paused_slots', missed + 1)
  return {3, ARGV[5]}
end

redis.call('HSET', job, 'last_slot', ARGV[5], 'next_due', next_due, 'claim', token .. ':' .. mode,
           'schedule_version', version)
if missed > 0 then
  redis.call('HINCRBY', job, 'missed', missed)
end
if mode == 'run' then
  redis.call('HSET', job, 'running', ARGV[5], 'running_since', now, 'running_term', term,
             'runner', ARGV[9], 'last_start', now)
  redis.call('HINCRBY', job, 'runs', 1)
end
return {1, ARGV[5]}
