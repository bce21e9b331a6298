-- rwlocks/inspect.lua (common/time, common/waiters, rwlocks/common prepended):
-- who holds a read-write lock, read-only.
--
-- KEYS[1] state, KEYS[2] readers, KEYS[3] queue (see acquire.lua)
--
-- Returns {queued, writers waiting, readers waiting, then per live holder:
-- kind ('r' | 'w'), token, fence, ttl_ms, host, pid, thread}.

local state, readers, queue = KEYS[1], KEYS[2], KEYS[3]
local now_ms = server_now_ms()
local meta = read_meta(state)
local w, r = 0, 0
for _, raw in ipairs(redis.call('LRANGE', queue, 0, -1)) do
  local ok, e = pcall(cmsgpack.unpack, raw)
  if ok and type(e) == 'table' and tonumber(e[2]) and tonumber(e[2]) >= now_ms then
    if e[8] == 'w' then w = w + 1 else r = r + 1 end
  end
end
local out = {redis.call('LLEN', queue), w, r}
local function add(kind, rec)
  local left = tonumber(rec[3]) - now_ms
  if left >= 0 then
    for _, v in ipairs({kind, rec[1], rec[2], left, rec[4] or '', tonumber(rec[5]) or 0, rec[6] or ''}) do
      table.insert(out, v)
    end
  end
end
if meta.writer then add('w', meta.writer) end
for _, t in ipairs(redis.call('ZRANGE', readers, 0, -1)) do
  local raw = redis.call('HGET', state, 'r:' .. t)
  if raw then
    local ok, rec = pcall(cmsgpack.unpack, raw)
    if ok and type(rec) == 'table' then add('r', rec) end
  end
end
return out
