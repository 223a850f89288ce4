"""A local receiver for an app's auth hooks: an HTTP server on loopback (the stack allows
loopback and plain http for apps' URLs, IDENTITY_ALLOW_PRIVATE_OUTBOUND and
IDENTITY_ALLOW_INSECURE_OUTBOUND) that verifies every call's Standard Webhooks signature with
the `standardwebhooks` package, an implementation other than the service's own, records it, and
answers what the test says."""

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from standardwebhooks import Webhook


class HookReceiver:
    def __init__(self, answer=None, status=200, delay=0.0):
        self.answer = answer if answer is not None else {"action": "allow"}
        self.status = status
        self.delay = delay
        self.secret = None  # set from the admin API's answer before the first call
        self.calls = []  # (payload or None, verified: bool, headers)
        self.ports = []  # the client's source port of each call: one per connection
        self._lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            # Keep-alive, as an app's backend would: the service may send the next call on the
            # same connection (`ports` shows whether it does).
            protocol_version = "HTTP/1.1"
            # Headers and body go out in two writes: without this, Nagle holds the second until
            # the service's delayed ACK (40 ms) on a kept-alive connection.
            disable_nagle_algorithm = True

            def do_POST(self):
                with receiver._lock:
                    receiver.ports.append(self.client_address[1])
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                headers = {k.lower(): v for k, v in self.headers.items()}
                payload, verified = None, False
                try:
                    payload = Webhook(receiver.secret).verify(body, headers)
                    verified = True
                except Exception:  # noqa: BLE001 - any failure is "not verified"
                    pass
                with receiver._lock:
                    receiver.calls.append((payload, verified, headers))
                if receiver.delay:
                    time.sleep(receiver.delay)
                answer = receiver.answer(payload) if callable(receiver.answer) else receiver.answer
                data = answer if isinstance(answer, bytes) else json.dumps(answer).encode()
                try:
                    self.send_response(receiver.status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except OSError:
                    pass  # the service gave up waiting (a timeout test)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def payloads(self):
        with self._lock:
            return [c[0] for c in self.calls]

    def stop(self):
        self.server.shutdown()
        self.server.server_close()
