-- redlock/trust.lua (common/time.lua prepended): vouch that this master has forgotten no quorum
-- grant (it is brand new, or every write survived: appendfsync always), so it grants at once
-- instead of refusing for one max TTL (see redlock/guard.lua). The vouch holds for this server
-- process only: a restart (another run_id) or the loss of the key is detected again.
--
-- KEYS[1] boot   string, no TTL: "<run_id> <lost_ms>" (see redlock/guard.lua)
--
-- Returns the server's run_id.

local run_id = string.match(redis.call('INFO', 'server'), 'run_id:(%x+)')
redis.call('SET', KEYS[1], run_id .. ' 0')
return run_id
