"""An app's hook backend on loopback for the bench (hook_cost.py, hook_fairness.py): answers
every POST with `answer` after `delay` seconds, over HTTP/1.1 keep-alive, and counts the calls.
The bench's stack allows loopback and plain http for apps' URLs."""

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class Receiver:
    def __init__(self, delay, answer=None):
        self.calls = 0
        body = json.dumps(answer if answer is not None else {"action": "allow"}).encode()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            # Headers and body go out in two writes: without this, Nagle holds the second until
            # the service's delayed ACK (40 ms) on a kept-alive connection.
            disable_nagle_algorithm = True

            def do_POST(self):
                self.rfile.read(int(self.headers.get("Content-Length", "0")))
                receiver.calls += 1  # handler threads may race: a count to show calls came, not an exact one
                time.sleep(delay)
                try:
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                except OSError:
                    pass  # the service stopped waiting long ago

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = "http://127.0.0.1:%d/hook" % self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self):
        self.server.shutdown()
        self.server.server_close()
