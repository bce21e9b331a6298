-- queues/delete_dead_letter.lua (common/time.lua, queues/common.lua, queues/find_dead.lua
-- prepended): delete one dead letter, named by its message id, for good.
--
-- In one step: find the dead letter (the oldest, should two share the id),
-- take it off the dead-letter list and forget its error.
--
-- KEYS[1] dead    list: dead-lettered envelopes, oldest first
-- KEYS[2] errors  hash: message id -> JSON {error, attempts, failed_ms}
-- ARGV[1] id      the message id (any allowed name, compared whole)
--
-- Returns 1 deleted, 0 no dead letter has that id (requeued, deleted or
-- dropped past the dead-letter limit since it was seen).

local dead, errors = KEYS[1], KEYS[2]
local id = ARGV[1]
local env = find_dead(dead, id)
if not env then return 0 end
redis.call('LREM', dead, 1, env)
redis.call('HDEL', errors, id)
return 1
