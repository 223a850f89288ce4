-- POST /v1/token/introspect (RFC 7662) of one live access token with the app's secret key
-- (BENCH_SECRET_KEY, BENCH_TOKEN): what an app backend calls on every request.
dofile(os.getenv("BENCH_DIR") .. "/wrk/report.lua")
wrk.method = "POST"
wrk.headers["Authorization"] = "Bearer " .. os.getenv("BENCH_SECRET_KEY")
wrk.headers["Content-Type"] = "application/x-www-form-urlencoded"
wrk.body = "token=" .. os.getenv("BENCH_TOKEN")
