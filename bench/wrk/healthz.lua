-- GET /healthz: the HTTP server's static answer, the limit for GET /v1/me.
dofile(os.getenv("BENCH_DIR") .. "/wrk/report.lua")
