"""make bench's soak (`--soak SECONDS`, 600 for the ten minutes the performance issue asks for):
refresh and sign-in under load together for that long, with the revocation worker's purge on
its own schedule, and the size of every table that grows with traffic sampled each minute.

A table with a purge that keeps up ends the run about where it was after the first minutes;
one that only grows shows it. Live data grows with what it counts (every sign-in starts a
session that lives until it ends or expires), so the report gives the live sessions at each
sample beside the tables, and the run's refresh count beside `refresh_tokens`, whose spent
rows are kept for theft detection for the retention period (IDENTITY_RETENTION_SECONDS,
30 days)."""
import os
import threading
import time

import scale

SAMPLE_EVERY = 60


def measure(stack, app, base, seconds, cores, wrk, sign_up, refresh_tokens, sign_in_connections, psql):
    db = stack.env["IDENTITY_DATABASE_URL"]
    key = app["app_key"]
    email, password, _ = sign_up(base, key, "soak")
    tokens = refresh_tokens(base, key, 18, os.path.join(stack.log_dir, "refresh-tokens-soak.txt"))
    psql(db, "ANALYZE")
    samples = [{"at_s": 0, "tables": scale.table_sizes(db, psql), "live_sessions": live_sessions(db, psql)}]
    figures = {}

    def load(name, run):
        figures[name] = run()

    loads = [
        threading.Thread(target=load, args=("refresh", lambda: wrk(
            "refresh.lua", base + "/v1/auth/token/refresh", seconds, 16, 1,
            {"BENCH_APP_KEY": key, "BENCH_TOKENS_FILE": tokens}))),
        threading.Thread(target=load, args=("sign_in", lambda: wrk(
            "sign_in.lua", base + "/v1/auth/sign-in", seconds, sign_in_connections(cores), 1,
            {"BENCH_APP_KEY": key, "BENCH_EMAIL": email, "BENCH_PASSWORD": password}))),
    ]
    started = time.monotonic()
    for thread in loads:
        thread.start()
    while any(thread.is_alive() for thread in loads):
        next_sample = started + len(samples) * SAMPLE_EVERY
        for thread in loads:
            thread.join(timeout=max(0.0, next_sample - time.monotonic()))
        if any(thread.is_alive() for thread in loads):
            samples.append({"at_s": round(time.monotonic() - started), "tables": scale.table_sizes(db, psql),
                            "live_sessions": live_sessions(db, psql)})
    psql(db, "ANALYZE")
    samples.append({"at_s": round(time.monotonic() - started), "tables": scale.table_sizes(db, psql),
                    "live_sessions": live_sessions(db, psql)})
    result = {"seconds": seconds, "sample_every_s": SAMPLE_EVERY,
              "refresh": {k: figures["refresh"].get(k) for k in ("per_second", "requests", "p99_ms", "non_2xx", "errors")},
              "sign_in": {k: figures["sign_in"].get(k) for k in ("per_second", "requests", "p99_ms", "non_2xx", "errors")},
              "samples": samples}
    report(result)
    return result


def check(result):
    """A soak whose load was refused or failed measured nothing: it fails the run."""
    for path in ("refresh", "sign_in"):
        figure = result[path]
        if not figure["requests"] or figure["errors"] or figure["non_2xx"]:
            raise SystemExit("bench: the soak's %s load failed: %r" % (path, figure))


def live_sessions(db, psql):
    return int(psql(db, "SELECT count(*) FROM sessions WHERE ended_at IS NULL AND expires_at > now()"))


def report(result):
    first, half, last = result["samples"][0], result["samples"][len(result["samples"]) // 2], result["samples"][-1]
    print("\nsoak: %d s of refresh (%.1f/s, %s requests) and sign-in (%.1f/s, %s requests) together" % (
        result["seconds"], result["refresh"]["per_second"], "{:,}".format(result["refresh"]["requests"] or 0),
        result["sign_in"]["per_second"], "{:,}".format(result["sign_in"]["requests"] or 0)))
    print("live sessions: %d at the start, %d at %d s, %d at the end" % (
        first["live_sessions"], half["live_sessions"], half["at_s"], last["live_sessions"]))
    print("tables that grow with traffic (bytes; live rows), at the start, at %d s and at the end:" % half["at_s"])
    for name in sorted(last["tables"]):
        cells = [(s["tables"].get(name, {}).get("bytes", 0), s["tables"].get(name, {}).get("rows", 0))
                 for s in (first, half, last)]
        print("  %-22s %s" % (name, "  ->  ".join("%14s %10s" % ("{:,}".format(b), "{:,}".format(r)) for b, r in cells)))
