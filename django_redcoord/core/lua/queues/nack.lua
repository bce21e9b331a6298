-- queues/nack.lua (common/time.lua, queues/common.lua prepended): a delivery failed.
--
-- KEYS[1] processing  list: the consumer's in-flight envelopes
-- KEYS[2] delayed     zset: envelope -> due time (ms)
-- KEYS[3] dead        list: dead-lettered envelopes
-- KEYS[4] errors      hash: message id -> JSON {error, attempts, failed_ms}
-- KEYS[5] wake        list: one token while messages may be ready
-- KEYS[6] settle      list: dead-lettered messages whose result record must be
--                     marked FAILED ("<id>\n<error JSON>"; see queues/common.lua)
-- KEYS[7] cancels     zset: id -> time of messages cancelled while claimed; a
--                     dead-lettered message leaves it (see bury)
-- KEYS[8] uniq        hash: unique key -> its holder (see queues/common.lua)
-- KEYS[9] uniq_ids    hash: id -> the unique key it holds: a retry waits with
--                     its key ('q'); a dead letter frees it
-- KEYS[10] ready, KEYS[11] seq, KEYS[12] gpend, KEYS[13] gstate, KEYS[14] gwait:
--                     the group keys (queues/common.lua): a grouped message's retry
--                     keeps its place in its group's line (waiting in gwait); a
--                     dead letter ends its run, and its group's next enters the line
-- ARGV[1] envelope    as claimed
-- ARGV[2] delay_ms    wait before the retry (backoff with jitter, from the caller)
-- ARGV[3] error       text describing the failure
-- ARGV[4] dead_now    '1' to dead-letter at once (e.g. the task no longer exists)
-- ARGV[5] dead_limit  dead letters kept (0: all); the oldest are dropped
--
-- Returns 0 not in processing (already requeued by the reaper: nothing done),
--         1 scheduled for a retry, 2 dead-lettered.

local processing, delayed, dead, errors, wake, settle = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]
local env = ARGV[1]
if redis.call('LREM', processing, 1, env) == 0 then
  return 0
end
local _, failed, max, _, _, flags, body = parse(env)
local g = group_of(flags, body)
local G = {KEYS[10], KEYS[11], KEYS[12], KEYS[13], KEYS[14]}
failed = failed + 1
local now = server_now_ms()
if failed >= max or ARGV[4] == '1' then
  bury(dead, errors, settle, env, failed, ARGV[3], now, tonumber(ARGV[5]), KEYS[7])
  unique_free(KEYS[8], KEYS[9], (parse(env)))
  if g then
    group_done(G, g, now)
    wake_one(wake)
  end
  return 2
end
if g then
  redis.call('ZADD', G[GWAIT], int(now + tonumber(ARGV[2])), with_failed(env, failed))
  group_back(G, g)
else
  redis.call('ZADD', delayed, int(now + tonumber(ARGV[2])), with_failed(env, failed))
end
unique_state(KEYS[8], KEYS[9], (parse(env)), 'q')
wake_one(wake)
return 1
