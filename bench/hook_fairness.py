"""One app's slow or dead auth hook against another app's throughput (docs/hooks.md, "A slow or
dead hook costs only its own app"): apps A1 and A2 refresh under a steady load of their own, A1's
`before_token` hook answering after 5 s and A2's never answering (both fail open, timeout
3000 ms), while app B, which has no hook, is measured signing in and refreshing. The same load on
A1 and A2 without their hooks is the baseline, alternated with the hooked runs round by round so
that a drift of the machine shows; B's figures are compared by their medians.

The hooks' receivers listen on loopback over plain http (the bench's stack allows it)."""

import json
import os
import secrets
import statistics
import threading
import time
import urllib.error
import urllib.request

from hook_receiver import Receiver

LATE_SECONDS = 5.0
NEVER_SECONDS = 3600.0  # holds the connection open and answers nothing while the bench runs
# The noisy apps' own traffic, offered at the same pace in both conditions (an open loop: a
# refresh every NOISE_INTERVAL per chain, NOISE_CHAINS chains per app), so that what differs
# between them is the hooks alone: up to 80 refreshes a second per app.
NOISE_CHAINS = 4
NOISE_INTERVAL = 0.05


def measure(stack, plain, base, seconds, cores, smoke, sign_up, wrk, refresh_tokens, limit_flags, sign_in_connections,
            rounds):
    late, never = Receiver(LATE_SECONDS), Receiver(NEVER_SECONDS)
    try:
        noisy = []
        for name, receiver in (("bench-hook-late", late), ("bench-hook-never", never)):
            app = json.loads(stack.ctl("apps", "create", "--name", name))
            stack.ctl("apps", "settings", app["app_id"], *limit_flags("1000000000/1s"))
            noisy.append((app, receiver))
        email, password, _ = sign_up(base, plain["app_key"], prefix="bench-fair")
        connections = 32 if not smoke else 4
        out = {"refresh": {"none": [], "hooked": []}, "sign_in": {"none": [], "hooked": []},
               "noise": {"none": [], "hooked": []}}
        hooked_now = False
        for round_number in range(rounds):
            # Alternate which condition goes first, so that neither always follows the other.
            order = ("none", "hooked") if round_number % 2 == 0 else ("hooked", "none")
            for condition in order:
                if (condition == "hooked") != hooked_now:
                    for app, receiver in noisy:
                        if condition == "hooked":
                            stack.ctl("hooks", "set", app["app_id"], "before_token", "--url", receiver.url,
                                      "--timeout-ms", "3000", "--failure-policy", "fail_open")
                        else:
                            stack.ctl("hooks", "delete", app["app_id"], "before_token")
                    hooked_now = condition == "hooked"
                tag = "%s-%d" % (condition, round_number)
                stop = threading.Event()
                answered = []
                threads = []
                for index, (app, _) in enumerate(noisy):
                    tokens = refresh_tokens(base, app["app_key"], NOISE_CHAINS,
                                            os.path.join(stack.log_dir, "fair-noise-%s-%d.txt" % (tag, index)))
                    with open(tokens) as lines:
                        for token in lines.read().split():
                            threads.append(threading.Thread(target=noise, args=(base, app["app_key"], token, stop,
                                                                                answered), daemon=True))
                for thread in threads:
                    thread.start()
                noise_started = time.monotonic()
                time.sleep(1)  # the noise is under way (and, hooked, waiting on the hooks)
                tokens = refresh_tokens(base, plain["app_key"], connections + 2,
                                        os.path.join(stack.log_dir, "fair-refresh-%s.txt" % tag))
                out["refresh"][condition].append(wrk("refresh.lua", base + "/v1/auth/token/refresh", seconds,
                                                     connections, 2, {"BENCH_APP_KEY": plain["app_key"],
                                                                      "BENCH_TOKENS_FILE": tokens}))
                out["sign_in"][condition].append(wrk("sign_in.lua", base + "/v1/auth/sign-in", seconds,
                                                     sign_in_connections(cores), 2,
                                                     {"BENCH_APP_KEY": plain["app_key"], "BENCH_EMAIL": email,
                                                      "BENCH_PASSWORD": password}))
                stop.set()
                noise_seconds = time.monotonic() - noise_started
                for thread in threads:
                    thread.join()
                out["noise"][condition].append(len(answered) / noise_seconds)
        for app, _ in noisy if hooked_now else ():
            stack.ctl("hooks", "delete", app["app_id"], "before_token")
        out["hook_calls"] = {"late": late.calls, "never": never.calls}
        out["verdict"] = verdict(out)
        return out
    finally:
        late.stop()
        never.stop()


def noise(base, key, token, stop, answered):
    """One refresh chain of a noisy app at NOISE_INTERVAL, until `stop`: each answer's successor
    is the next token (a chain that breaks starts a guest session of its own again)."""
    while not stop.is_set():
        started = time.monotonic()
        request = urllib.request.Request(base + "/v1/auth/token/refresh", method="POST",
                                         data=json.dumps({"refresh_token": token}).encode(),
                                         headers={"Content-Type": "application/json", "X-App-Key": key})
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                token = json.loads(response.read())["data"]["refresh_token"]
                answered.append(1)
        except (urllib.error.URLError, OSError, KeyError, ValueError):
            request = urllib.request.Request(base + "/v1/auth/guest", method="POST",
                                             data=json.dumps({"secret": secrets.token_urlsafe(32)}).encode(),
                                             headers={"Content-Type": "application/json", "X-App-Key": key})
            try:
                with urllib.request.urlopen(request, timeout=10) as response:
                    token = json.loads(response.read())["data"]["refresh_token"]
            except (urllib.error.URLError, OSError, KeyError, ValueError):
                pass
        stop.wait(max(0.0, NOISE_INTERVAL - (time.monotonic() - started)))


def verdict(out):
    """B's medians with the hooks against without, and whether they stay within 10 %."""
    result = {}
    for path in ("refresh", "sign_in"):
        runs = out[path]
        none = statistics.median(r["per_second"] for r in runs["none"])
        hooked = statistics.median(r["per_second"] for r in runs["hooked"])
        ratio = hooked / none if none else 0
        failed = sum((r.get("non_2xx") or 0) + (r.get("failures") or 0) for r in runs["none"] + runs["hooked"])
        result[path] = {"none_median": none, "hooked_median": hooked, "ratio": ratio, "within_10_percent": ratio >= 0.9,
                        "failed_requests": failed}
    return result


def report(fairness):
    print("\napp B beside apps whose before_token hook answers after 5 s / never (fail open, 3 s timeout),")
    print("against the same load on those apps without hooks (B's req/s per round, then medians):")
    print("  (the hooks were called: late %(late)d, never %(never)d times)" % fairness["hook_calls"])
    for path in ("refresh", "sign_in"):
        runs, judged = fairness[path], fairness["verdict"][path]
        for label in ("none", "hooked"):
            print("  %-8s %-6s %s" % (path, label, "  ".join("%.1f/s (p99 %.1f ms)" % (r["per_second"], r.get("p99_ms") or 0)
                                                           for r in runs[label])))
        print("  %-8s hooked/none %.3f (%.1f vs %.1f req/s): %s; %d failed requests" % (
            path, judged["ratio"], judged["hooked_median"], judged["none_median"],
            "within 10 %" if judged["within_10_percent"] else "NOT within 10 %", judged["failed_requests"]))
    print("  the noisy apps' own refreshes answered: none %s, hooked %s req/s" % (
        ", ".join("%.1f" % v for v in fairness["noise"]["none"]), ", ".join("%.1f" % v for v in fairness["noise"]["hooked"])))
