-- queues/claim.lua (common/time.lua, ratelimit/common.lua, queues/common.lua prepended):
-- acknowledge, heartbeat, claim.
--
-- The worker's hot path: one round trip acknowledges the previous batch,
-- renews the consumer's heartbeat, promotes due delayed messages and moves up
-- to N ready messages onto the consumer's processing list, where they stay
-- until acknowledged (a crash loses nothing: the reaper requeues them).
--
-- A claim whose reply was lost (a timeout) moved messages the consumer never
-- saw onto its list. So a consumer that holds nothing unacknowledged says so
-- (recover = '1'): whatever is still on its list after the acknowledgements
-- is delivered again first. Claiming is idempotent, like every coordination
-- operation.
--
-- KEYS[1] ready       zset: envelope -> order score
-- KEYS[2] delayed     zset: envelope -> due time (ms)
-- KEYS[3] processing  list: this consumer's in-flight envelopes
-- KEYS[4] consumers   zset: processing-list key -> heartbeat deadline (ms)
-- KEYS[5] wake        list: one token while messages may be ready
-- KEYS[6] seq         integer: arrival counter
-- KEYS[7] paused      string, while the queue is paused (queues/pause.lua): then
--                     nothing new is claimed and no idle consumer is woken; what
--                     this consumer already holds is still delivered (recover)
-- KEYS[8] cancels     zset: id -> time of the messages cancelled while claimed
--                     (tasks/cancel.lua). A claimed message listed there is not
--                     delivered: it leaves our list and the zset (its record says
--                     it was cancelled). An acknowledged one (still on our list)
--                     leaves the zset.
-- KEYS[9] uniq        hash: unique key -> its holder (see queues/common.lua)
-- KEYS[10] uniq_ids   hash: id -> the unique key it holds: a claimed holder is
--                     marked running (until 's': its key is freed); an
--                     acknowledged or dropped one frees its key
-- KEYS[11] ready, KEYS[12] seq, KEYS[13] gpend, KEYS[14] gstate, KEYS[15] gwait:
--                     the group keys (queues/common.lua): a grouped message claimed
--                     counts as running in its group, and its group's next enters
--                     the line; one over its group's concurrency goes back to the
--                     front of its group, one its group's rate refuses waits in
--                     gwait (no attempt spent); an acknowledged one ends its run
-- ARGV[1] n           messages to claim (0: only acknowledge and heartbeat)
-- ARGV[2] timeout_ms  heartbeat validity; past it the reaper requeues our messages
-- ARGV[3] lifo        '1' or '0' (order of promoted delayed messages)
-- ARGV[4] recover     '1': the caller holds no unacknowledged message of this list
-- ARGV[5..] envelopes to acknowledge (remove from the processing list)
--
-- Returns {hint_ms, envelope...}: hint_ms is 0 when ready messages remain,
-- else the ms until the next delayed message is due, or -1 when none is (or
-- the queue is paused: its consumers idle until a resume wakes them).

local ready, delayed, processing, consumers, wake, seq = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]
local want, lifo = tonumber(ARGV[1]), ARGV[3]
local paused = want > 0 and redis.call('EXISTS', KEYS[7]) == 1
local cancels = KEYS[8]
local cancelling = redis.call('ZCARD', cancels) > 0
local uniq, uniq_ids = KEYS[9], KEYS[10]
local unique = redis.call('HLEN', uniq_ids) > 0
local G = {KEYS[11], KEYS[12], KEYS[13], KEYS[14], KEYS[15]}
local grouped = redis.call('EXISTS', G[GSTATE]) == 1
local now = server_now_ms()

for i = 5, #ARGV do
  -- (only when this delivery was still ours: a stale acknowledgement, of a delivery the
  -- reaper took back, must not forget the cancel of the message's next delivery)
  if redis.call('LREM', processing, 1, ARGV[i]) == 1 and (cancelling or unique or grouped) then
    local id, _, _, _, _, flags, body = parse(ARGV[i])
    if cancelling then redis.call('ZREM', cancels, id) end
    if unique then unique_free(uniq, uniq_ids, id) end
    local g = grouped and group_of(flags, body)
    if g then group_done(G, g, now) end
  end
end

redis.call('ZADD', consumers, int(now + tonumber(ARGV[2])), processing)

local due = redis.call('ZRANGEBYSCORE', delayed, '-inf', now, 'LIMIT', 0, 1000)
for _, env in ipairs(due) do
  local _, _, _, _, prio, flags, body = parse(env)
  local g, c = group_of(flags, body)
  redis.call('ZREM', delayed, env)
  if g then
    group_enter(G, env, g, c, prio, now)
    grouped = true
  else
    redis.call('ZADD', ready, order_score(seq, prio, lifo, false), env)
  end
end
if grouped then
  -- a group whose rate's tat was still ahead when it emptied keeps a field; one
  -- sampled per claim is dropped once idle and past it, so many short-lived groups
  -- do not pile up
  local sample = redis.call('HRANDFIELD', G[GSTATE], 1, 'WITHVALUES')
  if sample[1] and string.match(sample[2], '^0 0 ') and tonumber(string.sub(sample[2], 5)) <= now then
    redis.call('HDEL', G[GSTATE], sample[1])
  end
  for _, env in ipairs(redis.call('ZRANGEBYSCORE', G[GWAIT], '-inf', now, 'LIMIT', 0, 1000)) do
    local _, _, _, _, prio = parse(env)
    redis.call('ZADD', ready, order_score(seq, prio, '0', false), env)
    redis.call('ZREM', G[GWAIT], env)
  end
end

-- Take a grouped message popped off ready for this claim (true), or set it
-- aside (false): back to the front of its group when its group already runs
-- its concurrency, to gwait when its group's rate refuses it now.
local function take(env)
  local _, _, _, _, _, flags, body = parse(env)
  local g, c, limit, period, burst = group_of(flags, body)
  if not g then return true end
  local in_line, running, tat = gstate_get(G, g)
  if c > 0 and running >= c then
    redis.call('ZADD', G[GPEND], 0, g .. '\n' .. string.rep('0', 17) .. '\n' .. env)
    group_settle(G, g, math.max(in_line - 1, 0), running, tat, now)
    return false
  end
  if limit > 0 then
    local interval = period / limit
    local pass, new = gcra(tat > 0 and tat or nil, now, interval, burst * interval, 1)
    if not pass then
      redis.call('ZADD', G[GWAIT], int(now + math.ceil(new)), env)
      return false
    end
    tat = new
  end
  group_settle(G, g, math.max(in_line - 1, 0), running + 1, tat, now)
  return true
end

local out = {0}
if want > 0 then
  if ARGV[4] == '1' then
    local lost = redis.call('LRANGE', processing, 0, want - 1)
    for _, env in ipairs(lost) do
      out[#out + 1] = env
    end
  end
  if #out == 1 and not paused then
    if grouped then
      -- one at a time: taking a group's message may put its next in line, and
      -- at most this many set aside (throttled) before the claim stops looking
      local budget = want + 1000
      while #out <= want and budget > 0 do
        local env = redis.call('ZPOPMIN', ready)[1]
        if not env then break end
        budget = budget - 1
        if take(env) then out[#out + 1] = env end
      end
    else
      local popped = redis.call('ZPOPMIN', ready, want)
      for i = 1, #popped, 2 do
        out[#out + 1] = popped[i]
      end
    end
    if #out > 1 then
      redis.call('RPUSH', processing, unpack(out, 2))
    end
  end
  if cancelling and #out > 1 then -- drop the cancelled: off our list, never delivered
    local kept = {out[1]}
    for i = 2, #out do
      local id, _, _, _, _, flags, body = parse(out[i])
      if redis.call('ZREM', cancels, id) == 1 then
        redis.call('LREM', processing, 1, out[i])
        if unique then unique_free(uniq, uniq_ids, id) end
        local g = group_of(flags, body)
        if g then group_done(G, g, now) end
      else
        kept[#kept + 1] = out[i]
      end
    end
    out = kept
  end
  if unique then
    for i = 2, #out do
      unique_state(uniq, uniq_ids, (parse(out[i])), 'r')
    end
  end
end

if paused then
  if #out == 1 then out[1] = -1 end
elseif redis.call('ZCARD', ready) > 0 then
  wake_one(wake) -- more work: let another idle consumer take it
elseif #out == 1 then
  local next_due = redis.call('ZRANGE', delayed, 0, 0, 'WITHSCORES')[2]
  local next_wait = grouped and redis.call('ZRANGE', G[GWAIT], 0, 0, 'WITHSCORES')[2]
  if next_wait and (not next_due or tonumber(next_wait) < tonumber(next_due)) then next_due = next_wait end
  out[1] = next_due and math.max(1, tonumber(next_due) - now) or -1
end
return out
