-- wrk script of bench_async_views.py: which lock name each request asks for, and a JSON summary.
--
--   wrk ... -s bench/_asgi_wrk.lua http://127.0.0.1:PORT -- <path prefix> <tag> <own|shared> <names>
--
-- own:    every connection has a lock name of its own. wrk has no per-connection
--         hook, so each thread keeps a pool of <names> names (the caller passes
--         its connections + 1: wrk calls request() once on thread 0 to check the
--         script, and that name never comes back): request() takes one,
--         response() puts back the name the view echoes in its 200 body. A
--         request is only written after the response to the connection's
--         previous one, so no two requests in flight share a name. (A non-200
--         answer loses its name: the next request takes a fresh one, counted
--         as "spilled".)
-- shared: every request takes the next of <names> names, round robin.
--
-- done() prints one line "BENCHJSON {...}" with the totals and latency percentiles (µs).

local threads = {}
local next_tid = 0

function setup(thread)
  thread:set("tid", next_tid)
  next_tid = next_tid + 1
  table.insert(threads, thread)
end

function init(args)
  prefix, tag, shape, names = args[1], args[2], args[3], tonumber(args[4])
  pool, counter, spilled = {}, 0, 0
  ok, c409, c500, c503, cother = 0, 0, 0, 0, 0
  if shape == "own" then
    for i = names - 1, 0, -1 do
      table.insert(pool, tag .. "-" .. (tid * names + i))
    end
  end
end

function request()
  local name
  if shape == "own" then
    name = table.remove(pool)
    if name == nil then
      spilled = spilled + 1
      name = tag .. "-s" .. tid .. "-" .. spilled
    end
  else
    name = tag .. "-" .. (counter % names)
    counter = counter + 1
  end
  return wrk.format("GET", prefix .. name)
end

function response(status, headers, body)
  if status >= 200 and status < 300 then
    ok = ok + 1
    if shape == "own" then
      table.insert(pool, body)
    end
  elseif status == 409 then
    c409 = c409 + 1
  elseif status == 500 then
    c500 = c500 + 1
  elseif status == 503 then
    c503 = c503 + 1
  else
    cother = cother + 1
  end
end

function done(summary, latency, requests)
  local t = {ok = 0, c409 = 0, c500 = 0, c503 = 0, cother = 0, spilled = 0}
  for _, thread in ipairs(threads) do
    for k, _ in pairs(t) do
      t[k] = t[k] + (thread:get(k) or 0)
    end
  end
  local e = summary.errors
  io.write(string.format(
    'BENCHJSON {"requests": %d, "duration_us": %d, "ok": %d, "s409": %d, "s500": %d, "s503": %d, ' ..
    '"sother": %d, "spilled": %d, "connect": %d, "read": %d, "write": %d, "timeout": %d, ' ..
    '"p50_us": %d, "p90_us": %d, "p99_us": %d, "max_us": %d}\n',
    summary.requests, summary.duration, t.ok, t.c409, t.c500, t.c503, t.cother, t.spilled,
    e.connect, e.read, e.write, e.timeout,
    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max))
end
