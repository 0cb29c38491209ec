-- wrk hooks of the redirect benchmarks (test/bench/wrk.ts): a random path per request when
-- WRK_RANDOM_PREFIX is set (a flood of unknown slugs), and one JSON line with the figures at the end.
-- The random slugs come from a fixed seed, so every run sends the same paths in the same order and
-- meets the same known-keys filter false positives.
local prefix = os.getenv("WRK_RANDOM_PREFIX") or ""
local alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-"

if prefix ~= "" then
  init = function(args)
    math.randomseed(20261123)
  end
  request = function()
    local t = {}
    for i = 1, 12 do
      local n = math.random(1, #alphabet)
      t[i] = alphabet:sub(n, n)
    end
    return wrk.format(nil, prefix .. table.concat(t))
  end
end

done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    'WRK {"requests":%d,"duration_us":%d,"p50_us":%d,"p99_us":%d,"status":%d,"connect":%d,"read":%d,"write":%d,"timeout":%d}\n',
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(99),
    e.status, e.connect, e.read, e.write, e.timeout))
end
