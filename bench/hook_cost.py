"""What an app's before_token auth hook costs a sign-in and a refresh (docs/hooks.md): a local
receiver that answers after 5 ms, and the same paths on an app without the hook, alternated so a
drift of the machine shows. The stack runs with IDENTITY_ALLOW_PRIVATE_OUTBOUND=1 and
IDENTITY_ALLOW_INSECURE_OUTBOUND=1 so the receiver may listen on loopback over plain http."""

import json
import os

from hook_receiver import Receiver

ANSWER = {"action": "allow", "claims": {"plan": "bench"}}
DELAY_SECONDS = 0.005


def measure(stack, plain, base, seconds, cores, smoke, sign_up, wrk, refresh_tokens, limit_flags, sign_in_connections):
    receiver = Receiver(DELAY_SECONDS, ANSWER)
    try:
        hooked = json.loads(stack.ctl("apps", "create", "--name", "bench-hook"))
        stack.ctl("apps", "settings", hooked["app_id"], *limit_flags("1000000000/1s"))
        stack.ctl("hooks", "set", hooked["app_id"], "before_token", "--url",
                  receiver.url, "--timeout-ms", "2000")
        connections = 32 if not smoke else 4
        users = {}
        for label, app in (("hook", hooked), ("none", plain)):
            email, password, signed_up = sign_up(base, app["app_key"])
            if label == "hook":
                assert signed_up["access_token"], signed_up
            users[label] = (app, email, password)
        out = {"refresh": {"hook": [], "none": []}, "sign_in": {"hook": [], "none": []}}
        for round_number in range(1 if smoke else 2):
            for label, (app, email, password) in users.items():
                tokens = refresh_tokens(base, app["app_key"], connections + 2,
                                        os.path.join(stack.log_dir, "refresh-tokens-hook-%s-%d.txt" % (label, round_number)))
                out["refresh"][label].append(wrk("refresh.lua", base + "/v1/auth/token/refresh", seconds, connections, 2,
                                                 {"BENCH_APP_KEY": app["app_key"], "BENCH_TOKENS_FILE": tokens}))
                out["sign_in"][label].append(wrk("sign_in.lua", base + "/v1/auth/sign-in", seconds,
                                                 sign_in_connections(cores), 2,
                                                 {"BENCH_APP_KEY": app["app_key"], "BENCH_EMAIL": email,
                                                  "BENCH_PASSWORD": password}))
        out["hook_calls"] = receiver.calls
        return out
    finally:
        receiver.stop()


def report(cost):
    print("\nbefore_token hook answering in 5 ms vs no hook (per run: req/s, p50 ms, p99 ms):")
    print("  (the hook was called %d times)" % cost.get("hook_calls", 0))
    for path, runs in cost.items():
        if path == "hook_calls":
            continue
        for label in ("none", "hook"):
            print("  %-8s %-5s %s" % (path, label, "   ".join(
                "%.1f/s p50 %.2f p99 %.2f" % (r["per_second"], r.get("p50_ms") or 0, r.get("p99_ms") or 0)
                for r in runs[label])))
