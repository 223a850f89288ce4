-- GET /v1/me with one valid access token (BENCH_APP_KEY, BENCH_TOKEN).
dofile(os.getenv("BENCH_DIR") .. "/wrk/report.lua")
wrk.method = "GET"
wrk.headers["X-App-Key"] = os.getenv("BENCH_APP_KEY")
wrk.headers["Authorization"] = "Bearer " .. os.getenv("BENCH_TOKEN")
