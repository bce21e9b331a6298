-- leader/campaign.lua (common/time.lua prepended): become leader if the record is free, or renew it if ours.
--
-- KEYS[1] record    hash: identity, token, term, since_ms, renewed_ms, lease_ms (PEXPIRE lease)
-- KEYS[2] term      integer: last term issued (a hybrid logical clock, see next_monotonic;
--                   it expires TERM_KEEP_MS after the last election)
-- ARGV[1] token     token of the term the caller leads now, or '' if it leads none
-- ARGV[2] stale     a token the record may still hold from the caller's past (a term it
--                   stepped down from by its own clock, or a campaign whose reply was
--                   lost), or ''. Such a record is the caller's own: it is replaced by a
--                   new term at once instead of waiting for it to expire.
-- ARGV[3] fresh     a new random token: the token of the term started if the caller is elected
-- ARGV[4] identity  who the caller is (shown to everyone who reads the record)
-- ARGV[5] lease_ms  time-to-live of the record, milliseconds
-- ARGV[6] seen      highest term the caller has ever seen (0 if none)
--
-- Returns {code, term, since_ms, identity, pttl_ms, repaired} describing the record after the call:
--   code 1  renewed: the caller still leads the term of ARGV[1]
--   code 2  elected: a new term began with token ARGV[3]
--   code 0  another candidate leads (pttl_ms: time left on its record)
--   repaired 1 when the clock-based term was not above ARGV[6] (a server clock far
--   behind the one that issued the last term): it was raised above it.

local record, term_key = KEYS[1], KEYS[2]
local token, stale, fresh, identity = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
local lease, seen = tonumber(ARGV[5]), tonumber(ARGV[6])

local function reply(code, repaired)
  local r = redis.call('HMGET', record, 'term', 'since_ms', 'identity')
  return {code, tonumber(r[1]), tonumber(r[2]), r[3], redis.call('PTTL', record), repaired}
end

local now = server_now_ms()
local current = redis.call('HGET', record, 'token')

if current and token ~= '' and current == token then
  -- The incumbent renews: same term, same token, a new lease from now.
  -- (the PEXPIRE first: a full Redis still lets the leader renew; see run_when_full in
  -- common/time.lua)
  redis.call('PEXPIRE', record, lease)
  redis.call('HSET', record, 'renewed_ms', now, 'lease_ms', lease)
  return reply(1, 0)
end
if current and current ~= stale then
  return reply(0, 0)
end

-- Free (expired, resigned, never held) or still holding a token of the
-- caller's own past: a new term. Every change of leader gets a larger
-- number, the fence every leader action is checked against, even after
-- Redis lost its data (the term is a hybrid logical clock).
local TERM_KEEP_MS = 60000
local term = next_monotonic(term_key, lease + TERM_KEEP_MS)
local repaired = 0
if term <= seen then
  term = seen + 1
  redis.call('SET', term_key, int(term), 'PX', lease + TERM_KEEP_MS)
  repaired = 1
end
redis.call('DEL', record)
redis.call('HSET', record, 'identity', identity, 'token', fresh, 'term', int(term),
           'since_ms', now, 'renewed_ms', now, 'lease_ms', lease)
redis.call('PEXPIRE', record, lease)
return reply(2, repaired)
