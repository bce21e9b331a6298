-- signals/topic_publish.lua (common/time prepended): add a message to a durable topic.
--
-- KEYS[1] stream   the topic's messages (XADD), trimmed to about ARGV[2] entries
-- KEYS[2] index    set (shared): topic names, for the admin
-- ARGV[1] data     JSON
-- ARGV[2] maxlen   how many messages the topic keeps (approximately: MAXLEN ~)
-- ARGV[3] name     the topic's name
--
-- Returns the message id.

local id = redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[2], '*', 'd', ARGV[1])
redis.call('SADD', KEYS[2], ARGV[3])
return id
