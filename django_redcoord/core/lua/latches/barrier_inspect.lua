-- latches/barrier_inspect.lua (common/time, common/broadcast,
-- latches/barrier_common prepended): the state of a barrier, read-only.
--
-- KEYS[1] state, KEYS[2] parties
--
-- Returns {gen, broken or '', then per arrived party: token, lease_ms left,
-- host, pid, thread}.

local state, parties = KEYS[1], KEYS[2]
local now_ms = server_now_ms()
local m = redis.call('HMGET', state, 'gen', 'broken')
local out = {tonumber(m[1]) or 0, m[2] or ''}
for _, t in ipairs(redis.call('ZRANGEBYSCORE', parties, now_ms, '+inf')) do
  local raw = redis.call('HGET', state, 'a:' .. t)
  if raw then
    local ok, rec = pcall(cmsgpack.unpack, raw)
    if ok and type(rec) == 'table' then
      local left = tonumber(redis.call('ZSCORE', parties, t)) - now_ms
      for _, v in ipairs({t, left, rec[2] or '', tonumber(rec[3]) or 0, rec[4] or ''}) do table.insert(out, v) end
    end
  end
end
return out
