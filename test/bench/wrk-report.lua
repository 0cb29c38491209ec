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

-- A realistic mix when WRK_PATHS is set (comma-separated paths): each request a random code, user
-- agent, language, referrer and client address (X-Forwarded-For, believed with TRUST_PROXY), from a
-- fixed seed. Used by the live stream benchmark (test/bench/stream.ts).
local mix = os.getenv("WRK_PATHS") or ""
if mix ~= "" then
  local paths = {}
  for p in string.gmatch(mix, "[^,]+") do paths[#paths + 1] = p end
  local agents = {
    "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1",
    "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Mobile Safari/537.36",
    "Mozilla/5.0 (Linux; Android 13; SM-S911B) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/119.0.0.0 Mobile Safari/537.36",
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36",
    "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.1 Safari/605.1.15",
    "Mozilla/5.0 (iPad; CPU OS 17_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.1 Mobile/15E148 Safari/604.1",
  }
  local languages = { "en-US,en;q=0.9", "de-DE,de;q=0.9,en;q=0.5", "fr-FR,fr;q=0.8", "es-ES,es;q=0.9", "pt-BR,pt;q=0.9", "ja-JP,ja;q=0.9" }
  local referrers = { "", "", "https://www.instagram.com/", "https://t.co/abc", "https://www.google.com/" }
  local firsts = { 24, 31, 41, 62, 77, 81, 85, 91, 103, 151, 177, 185, 188, 193, 200, 212 }
  init = function(args)
    math.randomseed(20261127)
  end
  request = function()
    local headers = {
      ["User-Agent"] = agents[math.random(1, #agents)],
      ["Accept-Language"] = languages[math.random(1, #languages)],
      ["X-Forwarded-For"] = string.format("%d.%d.%d.%d", firsts[math.random(1, #firsts)], math.random(0, 255), math.random(0, 255), math.random(1, 254)),
    }
    local ref = referrers[math.random(1, #referrers)]
    if ref ~= "" then headers["Referer"] = ref end
    return wrk.format("GET", paths[math.random(1, #paths)], headers)
  end
end

done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    'WRK {"requests":%d,"duration_us":%d,"p50_us":%d,"p99_us":%d,"status":%d,"connect":%d,"read":%d,"write":%d,"timeout":%d}\n',
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(99),
    e.status, e.connect, e.read, e.write, e.timeout))
end
