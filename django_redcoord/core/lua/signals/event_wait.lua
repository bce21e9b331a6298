-- signals/event_wait.lua (common/time, common/broadcast prepended): a waiter
-- looks at the event and, unless it is set, registers (or renews) its wake list.
--
-- KEYS[1] state, KEYS[2] waiters (see event_set.lua)
-- KEYS[3] wake     the caller's wake list
-- ARGV[1] mode     'wait' register or renew, 'cancel' give up
-- ARGV[2] lease_ms how long the registration stays without another check
-- ARGV[3] seen     the generation this waiter saw when it began ('' at first):
--                  a set() since then counts even if clear() followed it (as
--                  threading.Event: a waiter woken by set() returns True)
--
-- Returns {1, data} set (or set since `seen`), {0, gen} not set.

local state, waiters, wake = KEYS[1], KEYS[2], KEYS[3]
local m = redis.call('HMGET', state, 'set', 'data', 'gen')
local gen = tonumber(m[3]) or 0
if ARGV[3] ~= '' and gen > tonumber(ARGV[3]) then m[1] = '1' end
if ARGV[1] == 'cancel' or m[1] == '1' then
  unwatch(waiters, wake)
else
  watch(waiters, wake, server_now_ms() + tonumber(ARGV[2]))
  if redis.call('PTTL', waiters) < tonumber(ARGV[2]) then redis.call('PEXPIRE', waiters, WAKE_KEEP_MS) end
end
if m[1] == '1' then return {1, m[2] or ''} end
return {0, gen}
