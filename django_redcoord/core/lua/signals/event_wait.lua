-- signals/event_wait.lua (common/time, common/broadcast prepended): a waiter
-- looks at the event and, unless it is set, registers (or renews) itself.
--
-- KEYS[1] state, KEYS[2] waiters (see event_set.lua)
-- KEYS[3] wake     stream: the waiters' wake-ups (common/broadcast.lua)
-- KEYS[4] probe    never written: refuses the script whole while its slot migrates (common/broadcast.lua)
-- ARGV[1] mode     'wait' register or renew, 'cancel' give up
-- ARGV[2] lease_ms how long the registration stays without another check
-- ARGV[3] seen     the generation this waiter saw when it began ('' at first):
--                  a set() since then counts even if clear() followed it (as
--                  threading.Event: a waiter woken by set() returns True)
-- ARGV[4] token    the waiter's token (its registration)
--
-- Returns {1, data} set (or set since `seen`), {0, gen, mark} not set: block
-- reading the wake stream after entry `mark`.

do local refused = keys_moving() if refused then return refused end end
local state, waiters, wake = KEYS[1], KEYS[2], KEYS[3]
local m = redis.call('HMGET', state, 'set', 'data', 'gen')
local gen = tonumber(m[3]) or 0
if ARGV[3] ~= '' and gen > tonumber(ARGV[3]) then m[1] = '1' end
if ARGV[1] == 'cancel' or m[1] == '1' then
  unwatch(waiters, ARGV[4])
else
  watch(waiters, ARGV[4], server_now_ms() + tonumber(ARGV[2]))
  if redis.call('PTTL', waiters) < tonumber(ARGV[2]) then redis.call('PEXPIRE', waiters, WAKE_KEEP_MS) end
end
if m[1] == '1' then return {1, m[2] or ''} end
return {0, gen, wake_mark(wake)}
