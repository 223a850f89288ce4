"""make bench-profile: where one refresh and one sign-in spend the machine's CPU.

Runs refresh and sign-in under load (wrk, as the table does) while `perf record` samples every
CPU, then splits the samples by process (gateway, token worker, PostgreSQL, RabbitMQ, the load
generator, the kernel's own threads) and, inside each, by library (libsodium's Argon2id,
OpenSSL, libpq, rabbitmq-c, the Swift runtime, the kernel...). Each share is turned into CPU
milliseconds per request with the request count of the same window, so two runs (before and
after a change) compare line by line. Needs `perf` (scripts/deps.sh installs linux-perf).
"""
import os
import re
import shutil
import subprocess
import threading
import time

# perf's comm is the thread's name (Dispatch's threads are "…oot.default-qos" in every
# process), so samples are told apart by process id; comm only names what has no known pid.
COMM_FALLBACK = (("postgres", "PostgreSQL"), ("wrk", "load generator"), ("swapper", "idle"),
                 ("kworker", "kernel threads"), ("ksoftirqd", "kernel threads"), ("rcu_", "kernel threads"))


def process_of(comm, pid, names_by_pid):
    if pid in names_by_pid:
        return names_by_pid[pid]
    for prefix, name in COMM_FALLBACK:
        if comm.startswith(prefix):
            return name
    return "other"


def library_of(dso):
    dso = os.path.basename(dso.strip("[]"))
    for needle, name in (("kernel", "kernel"), ("libsodium", "libsodium (Argon2id)"), ("libcrypto", "OpenSSL"),
                         ("libssl", "OpenSSL"), ("libpq", "libpq"), ("librabbitmq", "rabbitmq-c"),
                         ("libmicrohttpd", "libmicrohttpd"), ("libswiftCore", "Swift runtime"),
                         ("libFoundation", "Foundation"), ("libdispatch", "Dispatch"), ("libc.so", "libc"),
                         ("libc-", "libc"), ("beam", "Erlang VM"), ("postgres", "postgres")):
        if needle in dso:
            return name
    if dso.startswith("identity-"):
        return "our code"
    return dso or "unknown"


def record(seconds, output):
    """`perf record` on every CPU for `seconds`; returns the Popen to wait on."""
    return subprocess.Popen(["perf", "record", "-a", "-F", "1999", "-o", output, "--", "sleep", str(seconds)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def split(output, names_by_pid):
    """Samples by (process, library), from perf script's comm, pid and dso of each sample."""
    text = subprocess.run(["perf", "script", "-i", output, "-F", "comm,pid,ip,dso"],
                          capture_output=True, text=True, check=True).stdout
    shares = {}
    for line in text.splitlines():
        head, _, dso = line.rpartition("(")
        parts = head.split()
        if len(parts) < 3 or not parts[-2].isdigit():
            continue
        comm, pid = " ".join(parts[:-2]), int(parts[-2])
        key = (process_of(comm, pid, names_by_pid), library_of(dso.rstrip(")")))
        shares[key] = shares.get(key, 0) + 1
    return shares


def profile_path(name, seconds, cores, load, log_dir, names_by_pid):
    """Runs `load()` (a wrk figure) while perf samples; CPU ms per request by process and library."""
    output = os.path.join(log_dir, "perf-%s.data" % re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-"))
    recorder = []
    # perf starts a moment after the load so the sampled window is inside it.
    starter = threading.Timer(1.0, lambda: recorder.append(record(seconds - 2, output)))
    started = time.monotonic()
    starter.start()
    figure = load()
    starter.join()
    recorder[0].wait()
    elapsed = time.monotonic() - started
    shares = split(output, names_by_pid())
    total = sum(shares.values()) or 1
    # Samples at 1999 Hz on every core: the window's CPU seconds are samples / 1999; requests
    # in that window are the run's rate times the window.
    window = seconds - 2
    requests = figure["per_second"] * window
    per_request = lambda samples: round(1000 * samples / 1999 / requests, 3)
    by_process = {}
    for (process, library), samples in shares.items():
        entry = by_process.setdefault(process, {"cpu_ms": 0, "libraries": {}})
        entry["cpu_ms"] += samples
        entry["libraries"][library] = per_request(samples)
    for entry in by_process.values():
        entry["cpu_ms"] = per_request(entry["cpu_ms"])
        entry["libraries"] = dict(sorted(entry["libraries"].items(), key=lambda kv: -kv[1]))
    busy = sum(v for (process, _), v in shares.items() if process != "idle")
    return {"per_second": figure["per_second"], "p99_ms": figure.get("p99_ms"), "window_s": window,
            "wall_s": round(elapsed, 1), "samples": total,
            "busy_share_of_cores": round(busy / 1999 / window / cores, 3),
            "by_process": dict(sorted(by_process.items(), key=lambda kv: -kv[1]["cpu_ms"]))}


def report(profiles):
    for name, figure in profiles.items():
        print("\n%s: %.1f/s, p99 %.1f ms; cores busy %.0f %% of the sampled %d s" % (
            name, figure["per_second"], figure["p99_ms"] or 0, 100 * figure["busy_share_of_cores"],
            figure["window_s"]))
        print("  CPU ms per request by process, and inside it by library (>= 0.01 ms):")
        for process, entry in figure["by_process"].items():
            if entry["cpu_ms"] < 0.005:
                continue
            libraries = ", ".join("%s %.3f" % (lib, ms) for lib, ms in entry["libraries"].items() if ms >= 0.01)
            print("  %-24s %8.3f   %s" % (process, entry["cpu_ms"], libraries))


def run(loads, seconds, cores, log_dir, names_by_pid):
    """`loads`: name -> a function running that path's wrk load for `seconds`; `names_by_pid()`:
    the processes to tell apart (ours, the broker, PostgreSQL's backends), read after each load."""
    if not shutil.which("perf"):
        raise SystemExit("bench: perf is missing (scripts/deps.sh installs linux-perf)")
    profiles = {name: profile_path(name, seconds, cores, load, log_dir, names_by_pid) for name, load in loads.items()}
    report(profiles)
    return profiles


