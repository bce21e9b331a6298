-- periodic/finish.lua (common/time.lua prepended): record the outcome of a job run.
--
-- KEYS[1] job          job state hash (see periodic/claim.lua)
-- ARGV[1] run_id       the run, as periodic/claim.lua returned it (the slot, or 'adhoc-<ms>')
-- ARGV[2] outcome      'ok', 'error' or 'timeout'
-- ARGV[3] error        error message, '' when none
-- ARGV[4] duration_ms  how long the run took (or has run so far, for a timeout), ms
-- ARGV[5] final        '1' the run ended: clear `running`;
--                      '0' a timeout recorded while the run still goes on
--
-- Also kept for the dead-man's switch (core/periodic/overdue.py):
--   consecutive_failures  runs that ended in error or timeout since the last 'ok' (0 after an 'ok')
--   last_ok               when the last 'ok' run ended, ms since the epoch (server time)
--
-- Not fenced by the term: a run that ends after its leader stepped down still
-- reports. But a run never overwrites the state of a newer run: when another
-- run was claimed since (`running` differs), nothing is written.
--
-- Returns 1 recorded, 0 a newer run was claimed since: nothing written.

local job = KEYS[1]
local run_id, outcome, err, duration, final = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5]

if redis.call('HGET', job, 'running') ~= run_id then
  return 0
end
local now = int(server_now_ms())
redis.call('HSET', job, 'outcome', outcome, 'error', err, 'duration', duration, 'last_end', now)
if outcome == 'ok' then
  redis.call('HSET', job, 'consecutive_failures', 0, 'last_ok', now)
elseif redis.call('HGET', job, 'finished_run') ~= run_id then
  -- once per run, even if a timeout is reported twice (while running, then at its end)
  redis.call('HINCRBY', job, 'failures', 1)
  redis.call('HINCRBY', job, 'consecutive_failures', 1)
end
redis.call('HSET', job, 'finished_run', run_id)
if final == '1' then
  redis.call('HDEL', job, 'running', 'running_since', 'running_term')
end
return 1
