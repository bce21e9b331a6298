-- queues/reap.lua (common/time.lua, queues/common.lua prepended): requeue the messages of dead consumers.
--
-- A consumer whose heartbeat deadline passed is dead: every envelope on its
-- processing list goes back to the front of the ready queue with the failed
-- delivery counted, or to the dead-letter list once it used its attempts.
--
-- KEYS[1] consumers  zset: processing-list key -> heartbeat deadline (ms)
-- KEYS[2] ready      zset: envelope -> order score
-- KEYS[3] dead       list: dead-lettered envelopes
-- KEYS[4] errors     hash: message id -> JSON {error, attempts, failed_ms}
-- KEYS[5] wake       list: one token while messages may be ready
-- KEYS[6] settle     list: "<id>\n<error JSON>" of dead letters whose record needs marking
-- KEYS[7] cancels    zset: id -> time of messages cancelled while claimed; a
--                    dead-lettered message leaves it (see bury)
-- KEYS[8] uniq       hash: unique key -> its holder (see queues/common.lua)
-- KEYS[9] uniq_ids   hash: id -> the unique key it holds: a requeued holder
--                    waits again ('q'); a dead letter frees its key
-- KEYS[10] ready, KEYS[11] seq, KEYS[12] gpend, KEYS[13] gstate, KEYS[14] gwait:
--                     the group keys (queues/common.lua): a requeued grouped
--                    message is back in its group's line; a dead letter ends its run
-- ARGV[1] max consumers to reap in this call
-- ARGV[2] dead_limit dead letters kept (0: all)
-- The processing lists are the members of KEYS[1]: names made by the Python
-- key builder, under this queue's hash tag (same Cluster slot).
--
-- Returns {requeued, dead_lettered, consumers_reaped}.

local consumers, ready, dead, errors, wake, settle = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]
local now = server_now_ms()
local limit = tonumber(ARGV[2])
local G = {KEYS[10], KEYS[11], KEYS[12], KEYS[13], KEYS[14]}
local gone = redis.call('ZRANGEBYSCORE', consumers, '-inf', now, 'LIMIT', 0, tonumber(ARGV[1]))
local requeued, buried = 0, 0
for _, processing in ipairs(gone) do
  local inflight = redis.call('LRANGE', processing, 0, -1)
  for i, env in ipairs(inflight) do
    local id, failed, max, _, prio, flags, body = parse(env)
    local g = group_of(flags, body)
    failed = failed + 1
    if failed >= max then
      bury(dead, errors, settle, env, failed,
        'the worker died or stopped heartbeating during delivery (' .. processing .. ')', now, limit, KEYS[7])
      unique_free(KEYS[8], KEYS[9], id)
      if g then group_done(G, g, now) end
      buried = buried + 1
    else
      redis.call('ZADD', ready, order_score(nil, prio, '0', #inflight - i + 1), with_failed(env, failed))
      unique_state(KEYS[8], KEYS[9], id, 'q')
      if g then group_back(G, g) end
      requeued = requeued + 1
    end
  end
  redis.call('DEL', processing)
  redis.call('ZREM', consumers, processing)
end
if requeued + buried > 0 then wake_one(wake) end
return {requeued, buried, #gone}
