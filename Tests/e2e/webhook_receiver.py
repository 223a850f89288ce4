"""A webhook endpoint for the tests: plain HTTP on loopback (the stack allows it with
IDENTITY_ALLOW_PRIVATE_OUTBOUND and IDENTITY_ALLOW_INSECURE_OUTBOUND), keeping every request it
is sent and answering the status it is told to. stop() closes its port, so deliveries meet a
refused connection, as with an app's backend that is down; start() opens the same port again."""

import http.server
import json
import threading
import time


class Received:
    def __init__(self, headers, body):
        self.headers = headers
        self.body = body
        self.at = time.monotonic()

    @property
    def payload(self):
        return json.loads(self.body)

    @property
    def webhook_id(self):
        return self.headers.get("webhook-id")


class WebhookReceiver:
    def __init__(self):
        self.received = []
        self.status = 200
        self._lock = threading.Lock()
        self._server = None
        self.port = None
        self.start()

    @property
    def url(self):
        return f"http://127.0.0.1:{self.port}/hooks"

    def start(self):
        receiver = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length)
                headers = {name.lower(): value for name, value in self.headers.items()}
                with receiver._lock:
                    receiver.received.append(Received(headers, body))
                    status = receiver.status
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args):
                pass

        self._server = http.server.ThreadingHTTPServer(("127.0.0.1", self.port or 0), Handler)
        self.port = self._server.server_address[1]
        threading.Thread(target=self._server.serve_forever, daemon=True).start()

    def stop(self):
        if self._server:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def messages(self, predicate=lambda message: True):
        with self._lock:
            return [m for m in self.received if predicate(m)]

    def wait_for(self, count, predicate=lambda message: True, timeout=15):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            found = self.messages(predicate)
            if len(found) >= count:
                return found
            time.sleep(0.05)
        raise AssertionError(f"{len(self.messages(predicate))} of {count} webhook messages within {timeout}s; "
                             f"all received: {[m.body[:200] for m in self.messages()]}")
