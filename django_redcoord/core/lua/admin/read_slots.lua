-- admin/read_slots.lua (common/time.lua prepended; on a Cluster run with the
-- flags allow-cross-slot-keys and no-writes): the admin's read of index
-- buckets kept per Cluster slot, for the slots of one node.
--
-- A Cluster keeps each admin index (live locks, queues, workers, ...) as one
-- bucket per slot (see core/keys.py), so that the script writing a resource
-- writes its index entry in the same slot. This reads the buckets of the
-- slots the caller says this node serves, in one call: the keys are
-- KeyBuilder's, given as a head and a tail around each slot's tag (the key
-- is head .. tag .. tail); nothing else on the node is read or scanned.
--
-- KEYS    none (the buckets of several slots of this node; declared keys must share one slot)
-- ARGV[1] P, the number of key shapes
-- ARGV[2 .. 1+3P]  for each shape: head, tail, type ('hash', 'set' or 'zset')
-- ARGV[2+3P ..]    slot tags (core.keys.slot_tag) of slots this node serves
--
-- Returns a flat array: for each bucket that is not empty, its shape's
-- number (0-based) and its contents (HGETALL, SMEMBERS or ZRANGE WITHSCORES);
-- for a bucket key holding another type, -1 and the key's name; for a slot
-- being migrated whose buckets this node cannot read now (Redis refuses a
-- script a key of such a slot that is not here), -2 and the slot's tag.

-- Most slots hold none of our buckets: one EXISTS over a slot's buckets (they
-- share its tag, so it is a one-slot command) skips them with one call.

local shapes = tonumber(ARGV[1])
local out = {}
local keys = {}
for t = 2 + 3 * shapes, #ARGV do
  local tag = ARGV[t]
  for i = 0, shapes - 1 do
    keys[i + 1] = ARGV[2 + 3 * i] .. tag .. ARGV[3 + 3 * i]
  end
  local present = redis.pcall('EXISTS', unpack(keys))
  if type(present) == 'table' and present.err then
    -- a slot in migration (MIGRATING here, keys already moved): missed for now, the
    -- other slots are read (one slot must not make the whole read fail)
    out[#out + 1] = -2
    out[#out + 1] = tag
  elseif present > 0 then
    for i = 0, shapes - 1 do
      local key, kind = keys[i + 1], ARGV[4 + 3 * i]
      local items
      if kind == 'hash' then
        items = redis.pcall('HGETALL', key)
      elseif kind == 'set' then
        items = redis.pcall('SMEMBERS', key)
      else
        items = redis.pcall('ZRANGE', key, 0, -1, 'WITHSCORES')
      end
      if items.err and string.find(items.err, 'non local', 1, true) then
        out[#out + 1] = -2  -- (the key moved between the EXISTS and now: as above)
        out[#out + 1] = tag
      elseif items.err then
        -- a key of another type (not ours): named, for the admin to skip and log
        out[#out + 1] = -1
        out[#out + 1] = key
      elseif #items > 0 then
        out[#out + 1] = i
        out[#out + 1] = items
      end
    end
  end
end
return out
