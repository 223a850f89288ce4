"""make bench's scale pass (`--scale`): users and live sessions seeded straight into the store
(bench/seed.sql, SQL on the bench database, not the HTTP API), then the same table again.

Prints and returns what a live session costs PostgreSQL (sessions and refresh tokens with
their indexes, before and after seeding, divided by the seeded sessions, with each relation's
share), and the sizes of the tables that grow with traffic before and after the load, so a
table without a purge shows."""
import json
import os
import subprocess
import time

import summary

SEED_SQL = os.path.join(os.path.dirname(os.path.abspath(__file__)), "seed.sql")
# Tables whose rows come with traffic; each has a purge (RetentionStore, the outbox relay),
# except audit_log, which no process may change (append-only by design).
GROWING = ["sessions", "refresh_tokens", "rate_limit_state", "outbox", "auth_nonces", "verification_codes",
           "mfa_challenges", "passkey_flows", "user_known_devices", "sign_in_devices", "devices", "mail_deliveries",
           "webhook_deliveries", "webhook_attempts", "apple_notifications", "audit_log"]
# A live session's relations: the two tables and each of their indexes.
SESSION_RELATIONS = """
    SELECT c.relname, pg_relation_size(c.oid) FROM pg_class c
    WHERE c.relname IN ('sessions', 'refresh_tokens') OR c.oid IN (
        SELECT indexrelid FROM pg_index WHERE indrelid IN ('sessions'::regclass, 'refresh_tokens'::regclass))
    ORDER BY 1"""


def table_sizes(db, psql):
    """{table: {"bytes", "rows"}} (rows: the statistics' live-tuple count, no full count)."""
    out = {}
    for line in psql(db, "SELECT relname, pg_total_relation_size(relid), n_live_tup FROM pg_stat_user_tables "
                         "WHERE relname IN (%s)" % ", ".join("'%s'" % t for t in GROWING)).splitlines():
        name, size, rows = line.split("|")
        out[name] = {"bytes": int(size), "rows": int(rows)}
    return out


def relation_sizes(db, psql):
    return {name: int(size) for name, size in (line.split("|") for line in psql(db, SESSION_RELATIONS).splitlines())}


def measure(stack, bench_apps, users, sessions_per_user, psql, run_table):
    db = stack.env["IDENTITY_DATABASE_URL"]
    apps = [a["app_id"] for a in bench_apps] + [
        json.loads(stack.ctl("apps", "create", "--name", "seeded-%d" % n))["app_id"] for n in (1, 2)]
    psql(db, "VACUUM ANALYZE sessions, refresh_tokens")
    before = relation_sizes(db, psql)
    sessions = users * sessions_per_user
    print("bench: seeding %d users and %d live sessions over %d apps (bench/seed.sql)..." % (users, sessions, len(apps)),
          flush=True)
    started = time.monotonic()
    subprocess.run(["psql", db, "-X", "-q", "-v", "users=%d" % users, "-v", "sessions_per_user=%d" % sessions_per_user,
                    "-v", "days=30", "-v", "apps={%s}" % ",".join(apps), "-f", SEED_SQL], check=True)
    seed_seconds = time.monotonic() - started
    after = relation_sizes(db, psql)
    by_relation = {name: round((after.get(name, 0) - before.get(name, 0)) / sessions, 1) for name in after}
    footprint = round(sum(after.values()) - sum(before.values())) / sessions
    print("bench: seeded in %.0f s; %.0f bytes per live session (%s)" % (
        seed_seconds, footprint, ", ".join("%s %.0f" % item for item in by_relation.items())), flush=True)
    # The purge runs on its own schedule in the revocation worker; the load runs long enough
    # for several of its runs (IDENTITY_PURGE_INTERVAL_SECONDS, 60 s by default).
    psql(db, "ANALYZE")  # live-row counts from fresh statistics, as after the load
    tables_before = table_sizes(db, psql)
    load_started = time.monotonic()
    rows, extra = run_table()
    load_seconds = time.monotonic() - load_started
    psql(db, "ANALYZE")
    tables_after = table_sizes(db, psql)
    return {"users": users, "sessions": sessions, "apps": len(apps), "seed_seconds": round(seed_seconds, 1),
            "bytes_per_seeded_session": round(footprint), "bytes_per_seeded_session_by_relation": by_relation,
            "load_seconds": round(load_seconds), "tables_before_load": tables_before, "tables_after_load": tables_after,
            "rows": rows, "after_load": {k: extra[k] for k in ("live_sessions", "refresh_token_rows",
                                                                "bytes_per_live_session")}}


def report(empty_rows, at_scale):
    summary.print_table(at_scale["rows"], "at scale: %d users, %d live sessions over %d apps (seeded in %.0f s)" % (
        at_scale["users"], at_scale["sessions"], at_scale["apps"], at_scale["seed_seconds"]))
    print("\nat scale against the empty database (median against median; within 15 % is the aim):")
    for empty, scaled in zip(empty_rows, at_scale["rows"]):
        change = scaled["per_second"]["median"] / empty["per_second"]["median"] - 1
        print("  %-44s %+6.1f %%  %s" % (empty["path"], 100 * change, "within 15 %" if abs(change) <= 0.15 else "OUTSIDE"))
    print("\nper live session (seeded, with indexes): %d bytes: %s" % (
        at_scale["bytes_per_seeded_session"],
        ", ".join("%s %.0f" % item for item in at_scale["bytes_per_seeded_session_by_relation"].items())))
    print("\ntables that grow with traffic, before and after the %d s load (bytes, live rows):" % at_scale["load_seconds"])
    before, after = at_scale["tables_before_load"], at_scale["tables_after_load"]
    for name in sorted(after):
        print("  %-22s %14s %10s  ->  %14s %10s" % (name, "{:,}".format(before.get(name, {}).get("bytes", 0)),
                                                  "{:,}".format(before.get(name, {}).get("rows", 0)),
                                                  "{:,}".format(after[name]["bytes"]), "{:,}".format(after[name]["rows"])))
