-- queues/claim.lua (common/time.lua, queues/common.lua prepended): acknowledge, heartbeat, claim.
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

for i = 5, #ARGV do
  -- (only when this delivery was still ours: a stale acknowledgement, of a delivery the
  -- reaper took back, must not forget the cancel of the message's next delivery)
  if redis.call('LREM', processing, 1, ARGV[i]) == 1 and (cancelling or unique) then
    local id = parse(ARGV[i])
    if cancelling then redis.call('ZREM', cancels, id) end
    if unique then unique_free(uniq, uniq_ids, id) end
  end
end

local now = server_now_ms()
redis.call('ZADD', consumers, int(now + tonumber(ARGV[2])), processing)

local due = redis.call('ZRANGEBYSCORE', delayed, '-inf', now, 'LIMIT', 0, 1000)
for _, env in ipairs(due) do
  local _, _, _, _, prio = parse(env)
  redis.call('ZADD', ready, order_score(seq, prio, lifo, false), env)
  redis.call('ZREM', delayed, env)
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
    local popped = redis.call('ZPOPMIN', ready, want)
    for i = 1, #popped, 2 do
      out[#out + 1] = popped[i]
    end
    if #out > 1 then
      redis.call('RPUSH', processing, unpack(out, 2))
    end
  end
  if cancelling and #out > 1 then -- drop the cancelled: off our list, never delivered
    local kept = {out[1]}
    for i = 2, #out do
      local id = parse(out[i])
      if redis.call('ZREM', cancels, id) == 1 then
        redis.call('LREM', processing, 1, out[i])
        if unique then unique_free(uniq, uniq_ids, id) end
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
  local next_due = redis.call('ZRANGE', delayed, 0, 0, 'WITHSCORES')
  out[1] = next_due[2] and math.max(1, tonumber(next_due[2]) - now) or -1
end
return out
