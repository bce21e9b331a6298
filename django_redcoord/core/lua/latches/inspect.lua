-- latches/inspect.lua (common/time, common/broadcast, latches/common prepended):
-- the state of a latch, read-only.
--
-- KEYS[1] state, KEYS[2] parties, KEYS[3] waiters
--
-- Returns {count or -1 (never used), initial, broken or '', waiters, then per
-- live party: token, fence, lease_ms left, host, pid, thread}.

local state, parties, waiters = KEYS[1], KEYS[2], KEYS[3]
local now_ms = server_now_ms()
local m = redis.call('HMGET', state, 'count', 'initial', 'broken')
local out = {tonumber(m[1]) or -1, tonumber(m[2]) or 0, m[3] or '', redis.call('ZCOUNT', waiters, now_ms, '+inf')}
for _, t in ipairs(redis.call('ZRANGEBYSCORE', parties, now_ms, '+inf')) do
  local raw = redis.call('HGET', state, 'p:' .. t)
  if raw then
    local ok, rec = pcall(cmsgpack.unpack, raw)
    if ok and type(rec) == 'table' then
      local left = tonumber(redis.call('ZSCORE', parties, t)) - now_ms
      for _, v in ipairs({t, rec[2], left, rec[4] or '', tonumber(rec[5]) or 0, rec[6] or ''}) do
        table.insert(out, v)
      end
    end
  end
end
return out
