-- queues/requeue_dead.lua (common/time.lua, queues/common.lua prepended): give dead letters another chance.
--
-- KEYS[1] dead     list: dead-lettered envelopes, oldest first
-- KEYS[2] ready    zset: envelope -> order score
-- KEYS[3] errors   hash: message id -> last error
-- KEYS[4] seq      integer: arrival counter
-- KEYS[5] wake     list: one token while messages may be ready
-- KEYS[6] settle   list: dead letters whose records are still to be marked
--                  FAILED (see queues/common.lua); the requeued ones leave it
-- KEYS[7] gpend, KEYS[8] gstate, KEYS[9] gwait: the group keys (queues/common.lua):
--                  a grouped dead letter joins its group as a new arrival
-- ARGV[1] n        at most this many (oldest first)
-- ARGV[2] lifo     '1' or '0'
--
-- Returns the number requeued (their failed attempts reset to 0).

local dead, ready, errors, seq, wake, settle = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]
local n = 0
local now
local ids = {}
for _ = 1, tonumber(ARGV[1]) do
  local env = redis.call('LPOP', dead)
  if not env then break end
  local id, _, _, _, prio, flags, body = parse(env)
  local g, c = group_of(flags, body)
  if g then
    now = now or server_now_ms()
    group_enter({ready, seq, KEYS[7], KEYS[8], KEYS[9]}, requeued(env), g, c, prio, now)
  else
    redis.call('ZADD', ready, order_score(seq, prio, ARGV[2], false), requeued(env))
  end
  redis.call('HDEL', errors, id)
  ids[id] = true
  n = n + 1
end
if n > 0 then
  unsettle(settle, ids)
  wake_one(wake)
end
return n
