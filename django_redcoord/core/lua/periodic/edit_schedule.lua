-- periodic/edit_schedule.lua (common/time.lua prepended): store a schedule edit of a periodic job.
--
-- KEYS[1] schedule  hash: the job's schedule edits (see keys.LeaderKeys.schedule):
--                     version   the newest edit's version (1, 2, ...; absent: never edited = 0)
--                     first     the oldest version still kept (0: the code-declared schedule)
--                     spec:<v>  edit v as JSON, written whole by the caller (opaque here)
--                     since:<v> when edit v took effect, ms since the epoch (Redis's clock)
--                   Version v is in force for the slots s with since:<v> < s <= since:<v+1>;
--                   version 0 (the code) for s <= since:1.
-- KEYS[2] job       job state hash (see periodic/claim.lua): read `last_slot`; gets `schedule_edit`
-- KEYS[3] jobs      set: names of the jobs with state under this election (for the admin)
-- ARGV[1] name      the job's name (member of KEYS[3])
-- ARGV[2] spec      the edit as JSON (never decoded here: its numbers stay as the caller wrote them)
-- ARGV[3] label     what the admin's job list shows while the edit is in force ('' for a revert:
--                   `schedule_edit` is deleted)
-- ARGV[4] limit     most versions kept at once (the leader drops the older ones as it passes them)
-- ARGV[5] expected  the version the caller edits from, or '' for any: refused if another edit
--                   landed since (the admin's form was read before it)
--
-- The edit takes effect now, by Redis's clock, or at the last claimed slot if a leader whose
-- clock runs ahead of Redis's claimed a later one (or at the previous edit's time if Redis's
-- clock went back): `since` only grows, and no slot claimed under the old schedule lies after it.
-- Versions whose window ends at or before `last_slot` are dropped first: no claim can use them.
--
-- Returns {1, version, since}  stored
--         {0, kept}            refused: `limit` versions are kept (no leader passes them); nothing
--                              written but the drop of the versions a leader passed
--         {2, version}         refused: the newest version is not ARGV[5]; nothing written

local schedule, job, jobs = KEYS[1], KEYS[2], KEYS[3]
local name, spec, label, limit, expected = ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4]), ARGV[5]

local meta = redis.call('HMGET', schedule, 'version', 'first')
local head, first = tonumber(meta[1]) or 0, tonumber(meta[2]) or 0
if expected ~= '' and tonumber(expected) ~= head then
  return {2, head}
end

local last = tonumber(redis.call('HGET', job, 'last_slot'))
if last then
  while first < head do
    local ends = tonumber(redis.call('HGET', schedule, 'since:' .. (first + 1)))
    if not ends or ends > last then
      break
    end
    redis.call('HDEL', schedule, 'spec:' .. first, 'since:' .. first)
    first = first + 1
  end
end
if head - first + 1 >= limit then
  redis.call('HSET', schedule, 'first', first)
  return {0, head - first + 1}
end

local since = server_now_ms()
if last and last > since then
  since = last
end
local previous = tonumber(redis.call('HGET', schedule, 'since:' .. head))
if previous and previous > since then
  since = previous
end
local version = head + 1
redis.call('HSET', schedule, 'version', version, 'first', first,
           'spec:' .. version, spec, 'since:' .. version, int(since))
redis.call('SADD', jobs, name)
if label == '' then
  redis.call('HDEL', job, 'schedule_edit')
else
  redis.call('HSET', job, 'schedule_edit', label)
end
return {1, version, int(since)}
