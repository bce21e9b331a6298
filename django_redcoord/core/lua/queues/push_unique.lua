-- queues/push_unique.lua (common/time.lua, queues/common.lua prepended): push one unique
-- task, or find the task that holds its key.
--
-- A unique task holds its key from this push until it leaves (see the unique helpers
-- in queues/common.lua: the claim, nack, reap, hand-back and cancel scripts keep the
-- key's state and free it). A push whose key is held, by a task that waits or by
-- one a worker runs:
--   mode 'skip'      pushes nothing: the holder answers for it;
--   mode 'replace'   a waiting holder is taken out (its settle entry says it was
--                    replaced, so its record is marked FAILED, TaskCancelled) and
--                    this task takes its key; a running one runs on, and this task
--                    is queued behind it and takes the key;
--   mode 'followup'  a waiting holder answers for it; a running one runs on, and
--                    this task is queued behind it and takes the key (one follow-up).
-- A key held past its expiry (the TTL safety net, counted from the task's due time) is
-- free. A task whose record exists already (an outbox re-send) is not pushed again: the
-- reply names itself as the holder.
--
-- KEYS[1] ready     zset: envelope -> order score
-- KEYS[2] seq       integer: arrival counter
-- KEYS[3] delayed   zset: envelope -> due time (ms)
-- KEYS[4] wake      list: one token while messages may be ready
-- KEYS[5] index     set: names of all queues (for the admin)
-- KEYS[6] record    hash: the task's result record, written with the push (and
--                   its 'envelope'), or, for a duplicate pushed after a commit,
--                   written as a FAILED record naming the holder
-- KEYS[7] uniq      hash: unique key -> its holder (queues/common.lua)
-- KEYS[8] uniq_ids  hash: id -> the unique key it holds
-- KEYS[9] settle    list: "<id>\n<detail JSON>" of messages whose record must be
--                   marked FAILED (a replaced holder)
-- KEYS[10] gpend, KEYS[11] gstate, KEYS[12] gwait: the group keys (queues/common.lua),
--                   given only for a grouped task (see queues/push.lua). A 'replace'
--                   takes out a grouped holder that is in line (ready or gwait); one
--                   still waiting behind its group (gpend) answers as a 'skip' does
-- ARGV[1] queue name to add to the index, or ''
-- ARGV[2] lifo      '1' or '0'
-- ARGV[3] r         number of field/value pairs of the record
-- ARGV[4] ttl       seconds the record lives
-- ARGV[5 .. 4+2r]   the record's field/value pairs
-- then: envelope (see queues/common.lua), priority, delay_ms, the unique key,
-- until ('s' or 'f'), mode ('skip', 'replace' or 'followup'), the key's TTL (ms),
-- the duplicate record's JSON error ('': write no record for a duplicate) and its
-- finished_at
--
-- Returns {1, replaced id or '', its delivery number}: pushed (holding the key); or
-- {0, holder id}: a duplicate, nothing pushed.

local ready, seq, delayed, wake, index, record = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]
local uniq, uniq_ids, settle = KEYS[7], KEYS[8], KEYS[9]
local lifo, r = ARGV[2], tonumber(ARGV[3])
local a = 5 + 2 * r
local env, prio, delay = ARGV[a], tonumber(ARGV[a + 1]), tonumber(ARGV[a + 2])
local ukey, untl, mode, key_ttl, dup_error = ARGV[a + 3], ARGV[a + 4], ARGV[a + 5], tonumber(ARGV[a + 6]), ARGV[a + 7]
local id = parse(env)
local now = server_now_ms()
if redis.call('EXISTS', record) == 1 then
  return {0, id} -- pushed already (an outbox re-send: the id is its idempotency key)
end

local replaced, taken, in_line = '', false, false
local holder, state, expires, _, held_env = unique_get(uniq, ukey)
if holder and tonumber(expires) <= now then
  redis.call('HDEL', uniq_ids, holder) -- expired: the key is free
  holder = nil
end
if holder then
  if state == 'q' and mode == 'replace' and held_env ~= '' then
    -- take the waiting holder out: as pushed, or with failed deliveries, or requeued
    local hid, _, max, enq, hprio, flags, body = parse(held_env)
    local variants = {flags}
    if flags % 4 < 2 then variants[2] = flags + 2 end
    for failed = 0, max - 1 do
      for _, f in ipairs(variants) do
        local candidate = failed .. '|' .. max .. '|' .. int(enq) .. '|' .. hprio .. '|' .. f .. '|' .. hid .. '\n' .. body
        if not taken then
          local lined = redis.call('ZREM', ready, candidate)
          if KEYS[12] then lined = lined + redis.call('ZREM', KEYS[12], candidate) end
          if lined + redis.call('ZREM', delayed, candidate) > 0 then
            taken, in_line = failed + 1, lined > 0
          end
        end
      end
      if taken then break end
    end
    local g = in_line and group_of(flags, body)
    if g then group_unline({ready, seq, KEYS[10], KEYS[11], KEYS[12]}, g, now) end
    if taken then
      replaced = holder
      redis.call('RPUSH', settle, holder .. '\n' .. cjson.encode({
        error = 'replaced by ' .. id .. ' (unique key ' .. ukey .. ')', replaced_by = id,
        attempts = taken, failed_ms = now}))
    end
  end
  if not taken and (state == 'q' or mode == 'skip') then
    if dup_error ~= '' then -- (its 'envelope' is kept for its arguments; it is in no queue)
      redis.call('HSET', record, 'envelope', env, unpack(ARGV, 5, 4 + 2 * r))
      redis.call('HSET', record, 'status', 'FAILED', 'error.1', dup_error, 'duplicate_of', holder,
        'finished_at', ARGV[a + 8])
      redis.call('EXPIRE', record, tonumber(ARGV[4]))
    end
    return {0, holder}
  end
  redis.call('HDEL', uniq_ids, holder) -- replaced, or running: this task takes the key
end

redis.call('HSET', record, 'envelope', env, unpack(ARGV, 5, 4 + 2 * r))
redis.call('EXPIRE', record, tonumber(ARGV[4]))
local _, _, _, _, _, flags, body = parse(env)
local g, c = group_of(flags, body)
if delay > 0 then
  redis.call('ZADD', delayed, string.format('%.0f', now + delay), env)
elseif g then
  if not KEYS[12] then return redis.error_reply('ERR grouped messages need the group keys') end
  local member = group_enter({ready, seq, KEYS[10], KEYS[11], KEYS[12]}, env, g, c, prio, now)
  if member then redis.call('HSET', record, 'pending', member) end
else
  redis.call('ZADD', ready, order_score(seq, prio, lifo, false), env)
end
unique_put(uniq, ukey, id, 'q', int(now + math.max(delay, 0) + key_ttl), untl, mode == 'replace' and env or '')
redis.call('HSET', uniq_ids, id, ukey)
if ARGV[1] ~= '' then redis.call('SADD', index, ARGV[1]) end
wake_one(wake)
return {1, replaced, taken or 0}
