-- POST /v1/auth/sign-in with one password user (production Argon2id cost).
dofile(os.getenv("BENCH_DIR") .. "/wrk/report.lua")
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["X-App-Key"] = os.getenv("BENCH_APP_KEY")
wrk.body = string.format('{"email":"%s","password":"%s"}', os.getenv("BENCH_EMAIL"), os.getenv("BENCH_PASSWORD"))
