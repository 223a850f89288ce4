"""What an app's before_token auth hook costs a sign-in and a refresh (docs/hooks.md): a local
receiver that answers after 5 ms, and the same paths on an app without the hook, alternated so a
drift of the machine shows. The stack runs with IDENTITY_ALLOW_PRIVATE_OUTBOUND=1 and
IDENTITY_ALLOW_INSECURE_OUTBOUND=1 so the receiver may listen on loopback over plain http."""

import json
import os
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ANSWER = json.dumps({"action": "allow", "claims": {"plan": "bench"}}).encode()
DELAY_SECONDS = 0.005
CALLS = [0]


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # Headers and body go out in two writes: without this, Nagle holds the second until the
    # service's delayed ACK (40 ms) on a kept-alive connection.
    disable_nagle_algorithm = True

    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", "0")))
        CALLS[0] += 1  # one handler thread at a time may race here: a count to show calls happen, not an exact one
        time.sleep(DELAY_SECONDS)
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(ANSWER)))
        self.end_headers()
        self.wfile.write(ANSWER)

    def log_message(self, *args):
        pass


def measure(stack, plain, base, seconds, cores, smoke, sign_up, wrk, refresh_tokens, limit_flags, sign_in_connections):
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        hooked = json.loads(stack.ctl("apps", "create", "--name", "bench-hook"))
        stack.ctl("apps", "settings", hooked["app_id"], *limit_flags("1000000000/1s"))
        stack.ctl("hooks", "set", hooked["app_id"], "before_token", "--url",
                  "http://127.0.0.1:%d/hook" % server.server_address[1], "--timeout-ms", "2000")
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
        out["hook_calls"] = CALLS[0]
        return out
    finally:
        server.shutdown()
        server.server_close()


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
