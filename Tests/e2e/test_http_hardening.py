"""The gateway's HTTP layer under hostile input: ambiguous body framing, idle and trickling
sockets, per-address connection limits, header and body deadlines, and the client address
behind trusted proxies (X-Forwarded-For).

Hostile sockets go to gateways of this module's own (same database, broker and workers as the
shared stack, short deadlines), so they never disturb the shared gateway the other tests use.
"""

import http.client
import json
import os
import resource
import selectors
import socket
import threading
import time

import pytest

from conftest import ServiceProcess, _free_port
from identity_client import PASSWORD, Client, Response, assert_problem, unique_email

HEADER_TIMEOUT = 2
BODY_TIMEOUT = 3
PER_IP_LIMIT = 50
TRUSTED_PROXIES = "127.0.0.1/32"
# Every loopback address is local on Linux: sockets bound to this one are "another client".
HOSTILE_ADDRESS = "127.0.0.2"
IDLE_SOCKETS = 2000
TRICKLING_SOCKETS = 20
# The bound: every hostile socket closed within this, other clients served meanwhile.
ALL_CLOSED_WITHIN = 60.0
HEALTHZ_WITHIN = 1.0
# An answer that closes the connection does so at once; anything near HEADER_TIMEOUT would be
# the keep-alive deadline closing it instead.
CLOSED_AT_ONCE = 1.0


class OwnGateway:
    """An identity-gateway process of this module's, on its own port."""

    def __init__(self, stack, name, **env):
        self.port = _free_port()
        self.base_url = f"http://127.0.0.1:{self.port}"
        self.process = ServiceProcess(
            name, [stack.binary("identity-gateway")],
            dict(stack.env_for("identity-gateway"), IDENTITY_HTTP_PORT=str(self.port), IDENTITY_PUBLIC_BASE_URL=self.base_url, **env),
            os.path.join(stack.log_dir, f"{name}.log"))
        self.client = Client(self.base_url)

    def start(self):
        self.process.start()
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            assert self.process.alive(), f"{self.process.name} exited:\n{self.process.tail()}"
            try:
                if self.client.get("/readyz", timeout=2).status == 200:
                    return self
            except OSError:
                pass
            time.sleep(0.2)
        raise AssertionError(f"{self.process.name} not ready:\n{self.process.tail()}")

    def stop(self):
        self.process.stop()

    def tail(self):
        return f"--- {self.process.name} ---\n{self.process.tail(40)}"


@pytest.fixture(scope="module")
def hardened(stack):
    """Short deadlines, a per-address limit of 50, and 127.0.0.1 as the one trusted proxy."""
    raise_open_files_limit(IDLE_SOCKETS + 1000)
    gateway = OwnGateway(stack, "hardened-gateway",
                         IDENTITY_TRUSTED_PROXIES=TRUSTED_PROXIES,
                         IDENTITY_HTTP_HEADER_TIMEOUT_SECONDS=str(HEADER_TIMEOUT),
                         IDENTITY_HTTP_BODY_TIMEOUT_SECONDS=str(BODY_TIMEOUT),
                         IDENTITY_HTTP_MAX_CONNECTIONS_PER_IP=str(PER_IP_LIMIT)).start()
    yield gateway
    gateway.stop()


@pytest.fixture(scope="module")
def untrusting(stack):
    """No trusted proxies at all (the default)."""
    gateway = OwnGateway(stack, "untrusting-gateway", IDENTITY_TRUSTED_PROXIES="").start()
    yield gateway
    gateway.stop()


def raise_open_files_limit(wanted):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
    if soft != resource.RLIM_INFINITY and soft < target:
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))


def connect(port, source=None, timeout=5.0):
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    if source:
        sock.bind((source, 0))
    sock.settimeout(timeout)
    sock.connect(("127.0.0.1", port))
    return sock


def read_until_closed(sock, timeout):
    """Everything the server sends until it closes; (data, closed, seconds)."""
    started = time.monotonic()
    data = b""
    sock.settimeout(timeout)
    try:
        while True:
            chunk = sock.recv(65536)
            if not chunk:
                return data, True, time.monotonic() - started
            data += chunk
    except ConnectionResetError:
        return data, True, time.monotonic() - started
    except socket.timeout:
        return data, False, time.monotonic() - started


def parse_response(data):
    """(status, headers lower-cased, body) of the first response in data."""
    head, _, rest = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split(" ")[1]) if lines and lines[0].startswith("HTTP/") else None
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers.setdefault(name.strip().lower(), value.strip())
    length = int(headers.get("content-length", "0") or 0)
    return status, headers, rest[:length]


# --- framing ---------------------------------------------------------------------------------

SIGN_UP = b"POST /v1/auth/sign-up HTTP/1.1\r\nHost: gateway\r\nContent-Type: application/json\r\n"
# The second request rides in the first one's body: whoever frames the body differently from a
# front proxy serves it. It must never be answered.
SMUGGLED = b"GET /healthz HTTP/1.1\r\nHost: gateway\r\n\r\n"

# (name, raw request, answered by: "gateway" → problem+json auth/bad-request with
# Connection: close; "libmicrohttpd" → its own HTML error page, it refuses before calling us)
FRAMING_CASES = [
    ("content-length then transfer-encoding",
     SIGN_UP + b"Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n" + SMUGGLED, "gateway"),
    ("transfer-encoding then content-length",
     SIGN_UP + b"Transfer-Encoding: chunked\r\nContent-Length: 48\r\n\r\n0\r\n\r\n" + SMUGGLED, "gateway"),
    ("two different content-lengths",
     SIGN_UP + b"Content-Length: 2\r\nContent-Length: 44\r\n\r\n{}" + SMUGGLED, "gateway"),
    ("content-length list 5, 6", SIGN_UP + b"Content-Length: 5, 6\r\n\r\nhello!", "libmicrohttpd"),
    ("content-length not digits", SIGN_UP + b"Content-Length: abc\r\n\r\n", "libmicrohttpd"),
    ("content-length with sign", SIGN_UP + b"Content-Length: +5\r\n\r\nhello", "libmicrohttpd"),
    ("content-length negative", SIGN_UP + b"Content-Length: -1\r\n\r\n", "libmicrohttpd"),
    ("content-length empty", SIGN_UP + b"Content-Length: \r\n\r\n", "libmicrohttpd"),
    ("content-length hex", SIGN_UP + b"Content-Length: 0x5\r\n\r\nhello", "libmicrohttpd"),
    # Fits libmicrohttpd's 64-bit parser but no Int: refused by the gateway.
    ("content-length over 2^63", SIGN_UP + b"Content-Length: 9223372036854775808\r\n\r\n", "gateway"),
    # 2^64 - 1 is libmicrohttpd's "size unknown": it would read until the connection closes.
    ("content-length 2^64-1", SIGN_UP + b"Content-Length: 18446744073709551615\r\n\r\n", "gateway"),
    ("transfer-encoding gzip", SIGN_UP + b"Transfer-Encoding: gzip\r\n\r\n", "gateway"),
    ("transfer-encoding gzip, chunked", SIGN_UP + b"Transfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n", "gateway"),
    ("transfer-encoding chunked twice in a list",
     SIGN_UP + b"Transfer-Encoding: chunked, chunked\r\n\r\n0\r\n\r\n", "gateway"),
    ("transfer-encoding on two lines",
     SIGN_UP + b"Transfer-Encoding: chunked\r\nTransfer-Encoding: identity\r\n\r\n0\r\n\r\n", "gateway"),
    ("transfer-encoding with a trailing space", SIGN_UP + b"Transfer-Encoding: chunked \r\n\r\n0\r\n\r\n", "gateway"),
    ("transfer-encoding in HTTP/1.0",
     b"POST /v1/auth/sign-up HTTP/1.0\r\nHost: gateway\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", "gateway"),
    ("space before the colon", SIGN_UP + b"Content-Length : 44\r\n\r\n" + SMUGGLED, "gateway"),
]


@pytest.mark.parametrize("raw, answered_by", [(raw, by) for _, raw, by in FRAMING_CASES],
                         ids=[name for name, _, _ in FRAMING_CASES])
def test_ambiguous_framing_is_400_and_the_connection_is_closed(hardened, raw, answered_by):
    with connect(hardened.port) as sock:
        sock.sendall(raw)
        data, closed, seconds = read_until_closed(sock, timeout=5)
    status, headers, body = parse_response(data)
    assert status == 400, (data[:600], hardened.tail())
    assert closed and seconds < CLOSED_AT_ONCE, f"connection left open ({seconds:.2f} s): {data[:300]!r}"
    assert data.count(b"HTTP/1.1 200") == 0, f"a smuggled request was answered: {data!r}"
    if answered_by == "gateway":
        assert headers.get("connection", "").lower() == "close", headers
        assert headers.get("content-type") == "application/problem+json", headers
        problem = json.loads(body)
        assert problem["code"] == "auth/bad-request" and problem["status"] == 400, problem
        assert problem["request_id"] == headers.get("x-request-id"), (problem, headers)


def test_content_length_beyond_64_bits_is_refused_and_closed(hardened):
    # libmicrohttpd 0.9.75 refuses this itself, before the gateway sees the request, with 413.
    with connect(hardened.port) as sock:
        sock.sendall(SIGN_UP + b"Content-Length: 99999999999999999999999\r\n\r\n")
        data, closed, seconds = read_until_closed(sock, timeout=5)
    status, _, _ = parse_response(data)
    assert status in (400, 413), data[:300]
    assert closed and seconds < CLOSED_AT_ONCE, seconds


def test_plain_chunked_and_repeated_equal_lengths_are_still_served(hardened, app):
    body = json.dumps({"email": unique_email(), "password": PASSWORD}).encode()
    chunked = (SIGN_UP + b"X-App-Key: " + app["app_key"].encode() + b"\r\nTransfer-Encoding: Chunked\r\n\r\n"
               + f"{len(body):x}\r\n".encode() + body + b"\r\n0\r\n\r\n")
    twice = json.dumps({"email": unique_email(), "password": PASSWORD}).encode()
    repeated = (SIGN_UP + b"X-App-Key: " + app["app_key"].encode() + b"\r\n"
                + f"Content-Length: {len(twice)}\r\nContent-Length: {len(twice)}\r\n\r\n".encode() + twice)
    for raw in (chunked, repeated):
        with connect(hardened.port) as sock:
            sock.sendall(raw)
            data = b""
            while b"\r\n\r\n" not in data or len(parse_response(data)[2]) < int(
                    parse_response(data)[1].get("content-length", "0")):
                chunk = sock.recv(65536)
                if not chunk:
                    break
                data += chunk
        status, headers, _ = parse_response(data)
        assert status == 201, (data[:600], hardened.tail())
        assert headers.get("connection", "").lower() != "close", headers


# --- connections and deadlines ---------------------------------------------------------------


def test_idle_and_trickling_sockets_from_one_address_leave_another_served(hardened):
    latencies, failures = [], []
    stop = threading.Event()

    def healthz_meanwhile():
        # Normal client on 127.0.0.1 (a trusted proxy without X-Forwarded-For: the peer itself).
        while not stop.is_set():
            started = time.monotonic()
            try:
                resp = hardened.client.get("/healthz", timeout=5)
                if resp.status != 200:
                    failures.append(resp)
            except OSError as exc:
                failures.append(exc)
            latencies.append(time.monotonic() - started)
            stop.wait(0.05)

    prober = threading.Thread(target=healthz_meanwhile, daemon=True)
    prober.start()
    selector = selectors.DefaultSelector()
    opened_at, closed_at, trickling = {}, {}, []
    started = time.monotonic()
    try:
        # Trickling sockets first, so they are within the address's limit and meet the deadline
        # rather than the limit: a header line every second, the header block never complete.
        for _ in range(TRICKLING_SOCKETS):
            sock = connect(hardened.port, source=HOSTILE_ADDRESS)
            sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: gateway\r\n")
            sock.setblocking(False)
            trickling.append(sock)
            opened_at[sock] = time.monotonic()
        idle = []
        for _ in range(IDLE_SOCKETS):
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            sock.bind((HOSTILE_ADDRESS, 0))
            sock.setblocking(False)
            try:
                sock.connect(("127.0.0.1", hardened.port))
            except BlockingIOError:
                pass
            idle.append(sock)
            opened_at[sock] = time.monotonic()
        opened_in = time.monotonic() - started
        for sock in trickling + idle:
            selector.register(sock, selectors.EVENT_READ)
        received = {}
        last_line = time.monotonic()
        while len(closed_at) < len(opened_at) and time.monotonic() - started < ALL_CLOSED_WITHIN:
            for key, _ in selector.select(timeout=0.2):
                sock = key.fileobj
                try:
                    chunk = sock.recv(4096)
                except BlockingIOError:
                    continue
                except OSError:
                    chunk = b""
                if chunk:
                    received[sock] = received.get(sock, b"") + chunk
                    continue
                selector.unregister(sock)
                closed_at[sock] = time.monotonic()
            if time.monotonic() - last_line >= 1.0:
                last_line = time.monotonic()
                for sock in trickling:
                    if sock not in closed_at:
                        try:
                            sock.sendall(b"X-Trickle: 1\r\n")
                        except OSError:
                            pass
        all_closed_in = time.monotonic() - started
        stop.set()
        prober.join(timeout=10)
        still_open = len(opened_at) - len(closed_at)
        over_limit_at_once = sum(1 for s in idle if s in closed_at and closed_at[s] - opened_at[s] < 1.0)
        trickle_lives = sorted(closed_at[s] - opened_at[s] for s in trickling if s in closed_at)
        latencies.sort()
        print(f"\n{IDLE_SOCKETS} idle + {TRICKLING_SOCKETS} trickling sockets from {HOSTILE_ADDRESS}: "
              f"opened in {opened_in:.2f} s, all closed {all_closed_in:.2f} s after the first; "
              f"{over_limit_at_once} closed within 1 s of opening (over the per-address limit); "
              f"trickling sockets lived {trickle_lives[0]:.2f}-{trickle_lives[-1]:.2f} s; "
              f"/healthz from 127.0.0.1 meanwhile: {len(latencies)} requests, "
              f"p50 {latencies[len(latencies) // 2] * 1000:.1f} ms, max {latencies[-1] * 1000:.1f} ms")
        assert still_open == 0, f"{still_open} hostile sockets still open after {ALL_CLOSED_WITHIN} s\n{hardened.tail()}"
        assert not received, f"{len(received)} hostile sockets were answered: {list(received.values())[:3]}"
        assert not failures, failures[:5]
        assert len(latencies) >= 10 and latencies[-1] < HEALTHZ_WITHIN, latencies[-5:]
        # Everything past the address's limit is turned away at once, not at a deadline.
        assert over_limit_at_once >= IDLE_SOCKETS + TRICKLING_SOCKETS - PER_IP_LIMIT, over_limit_at_once
        # The trickle does not extend the header deadline (a one-second reaper on top of it).
        assert len(trickle_lives) == TRICKLING_SOCKETS
        assert HEADER_TIMEOUT - 0.5 <= trickle_lives[0] and trickle_lives[-1] <= HEADER_TIMEOUT + 2.5, trickle_lives
    finally:
        stop.set()
        selector.close()
        for sock in opened_at:
            sock.close()
    # Once they are gone, the address has its connections back.
    with connect(hardened.port, source=HOSTILE_ADDRESS) as sock:
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: gateway\r\nConnection: close\r\n\r\n")
        data, _, _ = read_until_closed(sock, timeout=5)
    assert parse_response(data)[0] == 200, data[:300]


def test_a_body_trickle_is_cut_at_the_body_deadline(hardened, app):
    with connect(hardened.port, source=HOSTILE_ADDRESS) as sock:
        sock.sendall(SIGN_UP + b"X-App-Key: " + app["app_key"].encode() + b"\r\nContent-Length: 1000\r\n\r\n{")
        headers_sent = time.monotonic()
        sock.setblocking(False)
        closed_after = None
        # Half a second between bytes: well inside the idle timeout, so only the deadline cuts.
        while time.monotonic() - headers_sent < BODY_TIMEOUT + 10:
            time.sleep(0.5)
            try:
                if sock.recv(4096) == b"":
                    closed_after = time.monotonic() - headers_sent
                    break
                pytest.fail("an answer to an incomplete body")
            except BlockingIOError:
                pass
            except OSError:
                closed_after = time.monotonic() - headers_sent
                break
            try:
                sock.send(b" ")
            except OSError:
                closed_after = time.monotonic() - headers_sent
                break
    assert closed_after is not None, f"body trickle not cut within {BODY_TIMEOUT + 10} s\n{hardened.tail()}"
    assert BODY_TIMEOUT - 0.5 <= closed_after <= BODY_TIMEOUT + 2.5, closed_after


def test_header_deadline_restarts_after_each_response_on_keep_alive(hardened):
    request = b"GET /healthz HTTP/1.1\r\nHost: gateway\r\n\r\n"
    with connect(hardened.port, source=HOSTILE_ADDRESS) as sock:
        accepted = time.monotonic()
        # First request slowly, still within the header timeout counted from accept.
        for line in request.split(b"\r\n")[:-2]:
            sock.sendall(line + b"\r\n")
            time.sleep(HEADER_TIMEOUT * 0.35)
        sock.sendall(b"\r\n")
        assert parse_response(read_response(sock))[0] == 200
        # Idle a while, past the header timeout counted from accept but not from the response.
        time.sleep(HEADER_TIMEOUT * 0.6)
        assert time.monotonic() - accepted > HEADER_TIMEOUT
        sock.sendall(request)
        assert parse_response(read_response(sock))[0] == 200
        answered = time.monotonic()
        # A third request trickled: cut the header timeout after the second response.
        sock.sendall(b"GET /healthz HTTP/1.1\r\n")
        sock.setblocking(False)
        cut_after = None
        while time.monotonic() - answered < HEADER_TIMEOUT + 5:
            time.sleep(0.5)
            try:
                if sock.recv(4096) == b"":
                    cut_after = time.monotonic() - answered
                    break
            except BlockingIOError:
                pass
            except OSError:
                cut_after = time.monotonic() - answered
                break
            try:
                sock.send(b"X-Trickle: 1\r\n")
            except OSError:
                cut_after = time.monotonic() - answered
                break
    assert cut_after is not None and HEADER_TIMEOUT - 0.5 <= cut_after <= HEADER_TIMEOUT + 2.5, cut_after


def read_response(sock, timeout=5):
    """One whole response (headers and Content-Length body) from a keep-alive connection."""
    sock.settimeout(timeout)
    data = b""
    while True:
        if b"\r\n\r\n" in data:
            _, headers, body = parse_response(data)
            if len(body) >= int(headers.get("content-length", "0")):
                return data
        chunk = sock.recv(65536)
        if not chunk:
            return data
        data += chunk


def test_connections_over_the_per_address_limit_are_closed_at_once(hardened):
    socks = [connect(hardened.port, source=HOSTILE_ADDRESS) for _ in range(PER_IP_LIMIT + 10)]
    try:
        served = refused = 0
        for sock in socks:
            try:
                sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: gateway\r\n\r\n")
                data = read_response(sock)
            except OSError:
                data = b""
            if parse_response(data)[0] == 200:
                served += 1
            elif data == b"":
                refused += 1
        assert (served, refused) == (PER_IP_LIMIT, 10), (served, refused)
    finally:
        for sock in socks:
            sock.close()


def test_a_trusted_proxy_is_exempt_from_the_per_address_limit(hardened):
    # 127.0.0.1 is a trusted proxy here: twice the per-address limit, all open at once, all served.
    count = 2 * PER_IP_LIMIT
    socks = [connect(hardened.port) for _ in range(count)]
    try:
        for index, sock in enumerate(socks):
            sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: gateway\r\n"
                         + f"X-Forwarded-For: 198.51.100.{index % 250 + 1}\r\n\r\n".encode())
        statuses = [parse_response(read_response(sock))[0] for sock in socks]
        assert statuses == [200] * count, statuses
        # Still open, all of them: a second round on the same connections.
        for sock in socks:
            sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: gateway\r\nX-Forwarded-For: 198.51.100.1\r\n\r\n")
        assert [parse_response(read_response(sock))[0] for sock in socks] == [200] * count
    finally:
        for sock in socks:
            sock.close()


# --- client address --------------------------------------------------------------------------


def session_ip(client, app, tokens):
    resp = client.sessions(app, tokens["access_token"])
    assert resp.status == 200, resp
    [entry] = [s for s in resp.data if s["id"] == tokens["session_id"]]
    return entry["ip"]


@pytest.mark.parametrize("forwarded_for, expected", [
    ("203.0.113.7", "203.0.113.7"),
    # Entries left of the right-most untrusted hop were written by the client: ignored.
    ("198.51.100.66, 203.0.113.8", "203.0.113.8"),
    # Trusted hops on the right are skipped.
    ("203.0.113.9, 127.0.0.1", "203.0.113.9"),
    # A hop that is not an address: nothing left of it can be believed, the peer is the client.
    ("203.0.113.10, unknown", "127.0.0.1"),
])
def test_forwarded_for_from_a_trusted_peer_is_the_session_ip(hardened, client, app, forwarded_for, expected):
    resp = hardened.client.sign_up(app, headers={"X-Forwarded-For": forwarded_for})
    assert resp.status == 201, (resp, hardened.tail())
    assert session_ip(client, app, resp.data) == expected


def test_forwarded_for_lines_are_one_list_in_order(hardened, client, app):
    body = json.dumps({"email": unique_email(), "password": PASSWORD})
    conn = http.client.HTTPConnection("127.0.0.1", hardened.port, timeout=15)
    try:
        conn.putrequest("POST", "/v1/auth/sign-up")
        for name, value in (("Content-Type", "application/json"), ("X-App-Key", app["app_key"]),
                            ("X-Forwarded-For", "198.51.100.70, 203.0.113.11"),
                            ("X-Forwarded-For", "127.0.0.1"), ("Content-Length", str(len(body)))):
            conn.putheader(name, value)
        conn.endheaders(body.encode())
        resp = conn.getresponse()
        data = json.loads(resp.read())
    finally:
        conn.close()
    assert resp.status == 201, data
    assert session_ip(client, app, data["data"]) == "203.0.113.11"


def test_forwarded_for_from_an_untrusted_peer_is_ignored(hardened, untrusting, client, app):
    # A gateway that trusts no proxy: the socket peer, whatever the header says.
    resp = untrusting.client.sign_up(app, headers={"X-Forwarded-For": "203.0.113.7"})
    assert resp.status == 201, (resp, untrusting.tail())
    assert session_ip(client, app, resp.data) == "127.0.0.1"
    # The trusting gateway, reached from an address outside its trusted range.
    body = json.dumps({"email": unique_email(), "password": PASSWORD})
    conn = http.client.HTTPConnection("127.0.0.1", hardened.port, timeout=15,
                                      source_address=(HOSTILE_ADDRESS, 0))
    try:
        conn.request("POST", "/v1/auth/sign-up", body=body,
                     headers={"Content-Type": "application/json", "X-App-Key": app["app_key"],
                              "X-Forwarded-For": "203.0.113.7"})
        resp = conn.getresponse()
        data = json.loads(resp.read())
    finally:
        conn.close()
    assert resp.status == 201, data
    assert session_ip(client, app, data["data"]) == HOSTILE_ADDRESS


def test_invalid_trusted_proxies_stop_the_gateway_at_start_up(stack):
    done = ServiceProcess("bad-config-gateway", [stack.binary("identity-gateway")],
                          dict(stack.env_for("identity-gateway"), IDENTITY_HTTP_PORT=str(_free_port()),
                               IDENTITY_TRUSTED_PROXIES="10.0.0.0/8, 10.0.0/8, fd00::/129"),
                          os.path.join(stack.log_dir, "bad-config-gateway.log"))
    done.start()
    code = done.proc.wait(timeout=15)
    output = done.tail()
    assert code == 2, output
    assert '"10.0.0/8" is not a CIDR range' in output and '"fd00::/129" is not a CIDR range' in output, output
    assert '"10.0.0.0/8"' not in output, output


def test_bad_request_is_a_catalogue_problem(hardened):
    # http.client sends both Content-Length lines as given; the answer reads like any problem.
    conn = http.client.HTTPConnection("127.0.0.1", hardened.port, timeout=5)
    try:
        conn.putrequest("POST", "/v1/auth/sign-up")
        conn.putheader("Content-Type", "application/json")
        conn.putheader("Content-Length", "2")
        conn.putheader("Content-Length", "3")
        conn.endheaders(b"{}")
        resp = conn.getresponse()
        answer = Response(resp.status, resp.headers, resp.read(), 0)
    finally:
        conn.close()
    assert_problem(answer, 400, "auth/bad-request")
    assert (answer.header("Connection") or "").lower() == "close", answer.headers
