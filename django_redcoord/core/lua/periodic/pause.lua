-- periodic/pause.lua (common/time.lua prepended): pause a periodic job: its slots are skipped until resumed.
--
-- KEYS[1] job   job state hash (see periodic/claim.lua): gets `paused`, ms since the epoch
-- KEYS[2] jobs  set: names of the jobs with state under this election (for the admin)
-- ARGV[1] name  the job's name (member of KEYS[2])
--
-- Resuming is one HDEL of `paused` (no script). periodic/claim.lua reads the flag
-- in the same script that claims a slot, so a slot is either run or skipped, never both.
--
-- Returns 1 paused now, 0 already paused (the time it was paused is kept).

local job, jobs = KEYS[1], KEYS[2]
redis.call('SADD', jobs, ARGV[1])
return redis.call('HSETNX', job, 'paused', int(server_now_ms()))
