#!/usr/bin/env python3
"""What an introspection query costs the gateway: sends graphql-core's standard introspection
document N times (one at a time, one connection per request like a codegen run) and prints the
wall time per request and, given the gateway's pid, the gateway's CPU time over the run (from
/proc, so the figure is the gateway's own work, not the client's).

    bench/graphql_introspection.py --url http://127.0.0.1:8080 --app-key ak_… [--pid PID] [-n 100]

`--vary` makes every document distinct (a different operation name each time), so no answer
can be served from a cache of earlier ones: the figure of a client that never repeats itself.
Needs graphql-core (scripts/deps.sh installs it for the e2e tests). Prints figures only: timing
is this machine's, never asserted."""
import argparse
import json
import os
import statistics
import time
import urllib.request

from graphql import get_introspection_query


def cpu_seconds(pid):
    """utime + stime of process `pid` (and its threads), in seconds."""
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def document(name, vary):
    query = get_introspection_query()
    return query.replace("query IntrospectionQuery", f"query Introspection{name}", 1) if vary else query


def post(url, app_key, query):
    body = json.dumps({"query": query}).encode()
    request = urllib.request.Request(url + "/graphql", data=body, method="POST",
                                     headers={"Content-Type": "application/json", "X-App-Key": app_key})
    with urllib.request.urlopen(request, timeout=30) as response:
        answer = response.read()
        if response.status != 200 or b'"errors"' in answer[:20]:
            raise RuntimeError(f"introspection failed: {response.status} {answer[:300]!r}")
        return answer


def measure(url, app_key, count=100, pid=None, vary=False):
    """Per-request wall times (ms) and the gateway's CPU seconds over the run (None without pid)."""
    post(url, app_key, document("Warm", vary))  # a first request warms the connection path and any cache
    cpu_before = cpu_seconds(pid) if pid else None
    times = []
    for index in range(count):
        started = time.perf_counter()
        post(url, app_key, document(index, vary))
        times.append((time.perf_counter() - started) * 1000)
    cpu = cpu_seconds(pid) - cpu_before if pid else None
    return times, cpu


def report(label, times, cpu):
    ordered = sorted(times)
    line = (f"{label}: {len(times)} requests, total {sum(times) / 1000:.2f} s, mean {statistics.mean(times):.1f} ms, "
            f"median {statistics.median(times):.1f} ms, p95 {ordered[int(len(ordered) * 0.95) - 1]:.1f} ms")
    if cpu is not None:
        line += f", gateway CPU {cpu:.2f} s ({cpu * 1000 / len(times):.1f} ms/request)"
    return line


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--url", required=True)
    parser.add_argument("--app-key", required=True)
    parser.add_argument("--pid", type=int, help="the gateway's pid, for its CPU time")
    parser.add_argument("-n", type=int, default=100)
    parser.add_argument("--vary", action="store_true", help="a distinct document each time (no cache can answer)")
    args = parser.parse_args()
    times, cpu = measure(args.url.rstrip("/"), args.app_key, args.n, args.pid, args.vary)
    print(report("distinct documents" if args.vary else "the same document", times, cpu))


if __name__ == "__main__":
    main()
