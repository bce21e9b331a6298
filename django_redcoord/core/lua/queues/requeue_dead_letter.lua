-- queues/requeue_dead_letter.lua (common/time.lua, queues/common.lua, queues/find_dead.lua
-- prepended): give one dead letter, named by its message id, another chance.
--
-- In one step: find the dead letter (the oldest, should two share the id),
-- take it off the dead-letter list, forget its error, and put it at the back
-- of the ready queue (its priority band) with its failed attempts reset to 0.
--
-- KEYS[1] dead    list: dead-lettered envelopes, oldest first
-- KEYS[2] ready   zset: envelope -> order score
-- KEYS[3] errors  hash: message id -> JSON {error, attempts, failed_ms}
-- KEYS[4] seq     integer: arrival counter
-- KEYS[5] wake    list: one token while messages may be ready
-- KEYS[6] settle  list: dead letters whose records are still to be marked
--                 FAILED (see queues/common.lua); a requeued one leaves it
-- KEYS[7] gpend, KEYS[8] gstate, KEYS[9] gwait: the group keys (queues/common.lua):
--                 a grouped dead letter joins its group as a new arrival
-- ARGV[1] id      the message id (any allowed name, compared whole)
-- ARGV[2] lifo    '1' for last-in-first-out order, else '0'
--
-- Returns 1 requeued, 0 no dead letter has that id (requeued, deleted or
-- dropped past the dead-letter limit since it was seen).

local dead, ready, errors, seq, wake, settle = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]
local id = ARGV[1]
local env = find_dead(dead, id)
if not env then return 0 end
redis.call('LREM', dead, 1, env)
redis.call('HDEL', errors, id)
unsettle(settle, {[id] = true})
local _, _, _, _, prio, flags, body = parse(env)
local g, c = group_of(flags, body)
if g then
  group_enter({ready, seq, KEYS[7], KEYS[8], KEYS[9]}, requeued(env), g, c, prio, server_now_ms())
else
  redis.call('ZADD', ready, order_score(seq, prio, ARGV[2], false), requeued(env))
end
wake_one(wake)
return 1
