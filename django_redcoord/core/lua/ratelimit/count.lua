-- ratelimit/count.lua (common/time and ratelimit/common prepended): count a
-- hit that the server's CL.THROTTLE decided, for the admin's busiest keys
-- (sent in the same write as the command).
--
-- KEYS[1] top      zset: key -> hits this minute (see ratelimit/common.lua)
-- KEYS[2] before   zset: the same for the minute before
-- KEYS[3] index    hash: limiter name -> its policies (the admin's list)
-- ARGV[1] member   the key as the admin shows it
-- ARGV[2] cost     how much the request counted
-- ARGV[3] name     the limiter's name
-- ARGV[4] policies the limiter's policies as text
--
-- Returns 1.

count_hit(server_now_ms(), KEYS[1], KEYS[2], ARGV[1], tonumber(ARGV[2]), KEYS[3], ARGV[3], ARGV[4])
return 1
