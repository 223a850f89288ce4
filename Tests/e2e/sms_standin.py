"""A stand-in for a Twilio-compatible Messaging API: POST /2010-04-01/Accounts/{Sid}/Messages.json
with HTTP Basic auth (the account sid and auth token) and a form body `To`, `From` or
`MessagingServiceSid`, `Body`. It checks what Twilio checks (the path's sid is the Basic user, the
password is the account's token, To is E.164, a sender and a body are there): 401 or 400
otherwise. A test scripts answers per number (`answer(to, 429, 503)`: the next two requests for
that number get those statuses), then 201 with a message sid. `messages_to(number)` lists what
was accepted."""

import base64
import json
import re
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs


class SmsStandin:
    def __init__(self, account_sid, auth_token):
        self.account_sid = account_sid
        self.auth_token = auth_token
        self.lock = threading.Lock()
        self.accepted = []      # (to, from or service, body)
        self.requests = []      # (to, status) of every request, in order
        self.scripted = {}      # to → [status, ...]
        standin = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length).decode("utf-8")
                status, body = standin._handle(self.path, self.headers, raw)
                payload = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def stop(self):
        self.server.shutdown()
        self.server.server_close()

    def answer(self, to, *statuses):
        with self.lock:
            self.scripted.setdefault(to, []).extend(statuses)

    def _handle(self, path, headers, raw):
        match = re.fullmatch(r"/2010-04-01/Accounts/([A-Za-z0-9]+)/Messages\.json", path)
        if not match:
            return 404, {"code": 20404, "message": "not found"}
        if headers.get("Content-Type", "").split(";")[0].strip() != "application/x-www-form-urlencoded":
            return 400, {"code": 21000, "message": "form body expected"}
        expected = "Basic " + base64.b64encode(f"{self.account_sid}:{self.auth_token}".encode()).decode()
        if match.group(1) != self.account_sid or headers.get("Authorization") != expected:
            return 401, {"code": 20003, "message": "Authenticate"}
        form = {k: v[0] for k, v in parse_qs(raw, keep_blank_values=True).items()}
        to = form.get("To", "")
        sender = form.get("From") or form.get("MessagingServiceSid")
        with self.lock:
            if not re.fullmatch(r"\+[1-9][0-9]{6,14}", to) or not sender or not form.get("Body"):
                self.requests.append((to, 400))
                return 400, {"code": 21211, "message": "invalid To, From or Body"}
            scripted = self.scripted.get(to)
            status = scripted.pop(0) if scripted else 201
            self.requests.append((to, status))
            if status != 201:
                return status, {"code": 20429 if status == 429 else 20500, "message": "scripted"}
            self.accepted.append((to, sender, form["Body"]))
        return 201, {"sid": "SM" + uuid.uuid4().hex, "status": "queued", "to": to}

    def messages_to(self, to):
        with self.lock:
            return [body for (number, _, body) in self.accepted if number == to]

    def statuses_for(self, to):
        with self.lock:
            return [status for (number, status) in self.requests if number == to]

    def wait_for(self, to, count=1, timeout=15):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            found = self.messages_to(to)
            if len(found) >= count:
                return found
            time.sleep(0.05)
        return self.messages_to(to)
