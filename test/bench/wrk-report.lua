-- wrk hooks of the redirect benchmarks (test/bench/wrk.ts): a random path per request when
-- WRK_RANDOM_PREFIX is set (a flood of unknown slugs), the requests of a traffic mix file when
-- WRK_MIX is set (traffic-mix.ts: path, User-Agent, Accept-Language, X-Forwarded-For a line, sent in
-- turn), and one JSON line with the figures at the end.
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

local mix = os.getenv("WRK_MIX") or ""

if mix ~= "" then
  local requests = {}
  local n = 0
  init = function(args)
    for line in io.lines(mix) do
      local path, ua, lang, addr = line:match("^([^\t]*)\t([^\t]*)\t([^\t]*)\t([^\t]*)$")
      if path then
        local headers = {}
        for k, v in pairs(wrk.headers) do headers[k] = v end
        headers["User-Agent"] = ua
        headers["Accept-Language"] = lang
        headers["X-Forwarded-For"] = addr
        n = n + 1
        requests[n] = wrk.format("GET", path, headers)
      end
    end
    if n == 0 then error("no requests in " .. mix) end
  end
  local i = 0
  request = function()
    i = i % n + 1
    return requests[i]
  end
end

done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    'WRK {"requests":%d,"duration_us":%d,"p50_us":%d,"p99_us":%d,"status":%d,"connect":%d,"read":%d,"write":%d,"timeout":%d}\n',
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(99),
    e.status, e.connect, e.read, e.write, e.timeout))
end
