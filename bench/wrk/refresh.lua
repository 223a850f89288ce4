-- POST /v1/auth/token/refresh, every request with a fresh (never spent) refresh token: each
-- thread starts with its share of the tokens in BENCH_TOKENS_FILE (one per connection) and
-- replaces the token a request spent with the successor its answer carries. BENCH_REFRESH_FIELD
-- names the token in the body and the answer ("refresh_token" here; a peer may name it otherwise).
dofile(os.getenv("BENCH_DIR") .. "/wrk/report.lua")
local next_id = 0
function setup(thread)
  thread:set("id", next_id)
  next_id = next_id + 1
end

function init(args)
  queue = {}
  local threads = tonumber(os.getenv("BENCH_THREADS"))
  local line_number = 0
  for line in io.lines(os.getenv("BENCH_TOKENS_FILE")) do
    if line_number % threads == id then table.insert(queue, line) end
    line_number = line_number + 1
  end
  field = os.getenv("BENCH_REFRESH_FIELD") or "refresh_token"
  headers = {["Content-Type"] = "application/json", ["X-App-Key"] = os.getenv("BENCH_APP_KEY")}
end

function request()
  local token = table.remove(queue, 1) or "rt_exhausted"
  return wrk.format("POST", "/v1/auth/token/refresh", headers, '{"' .. field .. '":"' .. token .. '"}')
end

function response(status, headers, body)
  local token = body:match('"' .. field .. '":%s*"([^"]+)"')
  if token then table.insert(queue, token) end
end
