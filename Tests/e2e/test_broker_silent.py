"""A broker node that takes the connection, logs us in and then says nothing more (a node stuck
deleting a vhost, a half-dead one) must not hold a process: its channel open gives up after
`AMQPConnector.rpcSeconds` and the next node of IDENTITY_AMQP_URL is tried.

The silent node here is a few lines of AMQP 0-9-1 (connection.start, tune, open-ok, then
nothing), listed first; the real broker second. A gateway started on that list must become
ready and answer a sign-up through the real one."""

import os
import socket
import struct
import threading
import time
import urllib.parse

import pytest

from conftest import ServiceProcess, _free_port
from identity_client import Client, unique_email

# AMQPConnector.rpcSeconds (10) for the channel open, a login, and a margin for a loaded machine.
READY_WITHIN_SECONDS = 45
FRAME_END = b"\xce"


def _method(class_id, method_id, arguments):
    payload = struct.pack(">HH", class_id, method_id) + arguments
    return struct.pack(">BHI", 1, 0, len(payload)) + payload + FRAME_END


def _longstr(text):
    return struct.pack(">I", len(text)) + text


CONNECTION_START = _method(10, 10, b"\x00\x09" + struct.pack(">I", 0) + _longstr(b"PLAIN") + _longstr(b"en_US"))
CONNECTION_TUNE = _method(10, 30, struct.pack(">HIH", 2047, 131072, 60))
CONNECTION_OPEN_OK = _method(10, 41, b"\x00")


class SilentAfterLogin:
    """Accepts AMQP connections, completes the login, then never answers again (the sockets
    stay open until stop). Counts the connections it took."""

    def __init__(self):
        self.server = socket.socket()
        self.server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.server.bind(("127.0.0.1", 0))
        self.server.listen(16)
        self.port = self.server.getsockname()[1]
        self.logins = 0
        self.held = []
        self.stopped = False
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while not self.stopped:
            try:
                connection, _ = self.server.accept()
            except OSError:
                return
            self.held.append(connection)
            threading.Thread(target=self._serve, args=(connection,), daemon=True).start()

    @staticmethod
    def _read_frame(connection):
        header = connection.recv(7, socket.MSG_WAITALL)
        if len(header) < 7:
            raise ConnectionError("closed")
        _, _, size = struct.unpack(">BHI", header)
        body = connection.recv(size + 1, socket.MSG_WAITALL)
        return struct.unpack(">HH", body[:4]) if len(body) >= 4 else (0, 0)

    def _serve(self, connection):
        try:
            connection.recv(8, socket.MSG_WAITALL)           # "AMQP\0\0\9\1"
            connection.sendall(CONNECTION_START)
            self._read_frame(connection)                     # start-ok
            connection.sendall(CONNECTION_TUNE)
            self._read_frame(connection)                     # tune-ok
            self._read_frame(connection)                     # connection.open
            connection.sendall(CONNECTION_OPEN_OK)
            self.logins += 1
            while self._read_frame(connection):              # channel.open and whatever follows: no answer
                pass
        except (OSError, ConnectionError, struct.error):
            pass

    def stop(self):
        self.stopped = True
        self.server.close()
        for connection in self.held:
            connection.close()


@pytest.fixture
def silent_node():
    node = SilentAfterLogin()
    yield node
    node.stop()


def test_a_node_silent_after_login_is_left_for_the_next(stack, silent_node):
    real = stack.env_for("identity-gateway")["IDENTITY_AMQP_URL"]
    parts = urllib.parse.urlsplit(real)
    silent = parts._replace(netloc=parts.netloc.rsplit(":", 1)[0] + f":{silent_node.port}").geturl()
    port = _free_port()
    process = ServiceProcess("identity-gateway#silent-first", [stack.binary("identity-gateway")],
                             stack.env_for("identity-gateway", IDENTITY_HTTP_PORT=str(port),
                                           IDENTITY_METRICS_PORT=str(_free_port()),
                                           IDENTITY_AMQP_URL=f"{silent},{real}"),
                             os.path.join(stack.log_dir, "gateway-silent-first.log"))
    # AMQPEndpoints starts from node pid % 2: the silent one (index 0) needs an even pid.
    process.start()
    while process.pid % 2:
        process.kill()
        process.start()
    try:
        client = Client(f"http://127.0.0.1:{port}")
        started = time.monotonic()
        ready = False
        while time.monotonic() - started < READY_WITHIN_SECONDS and process.alive():
            try:
                ready = client.get("/readyz", timeout=2).status == 200
            except OSError:
                ready = False
            if ready:
                break
            time.sleep(0.5)
        took = time.monotonic() - started
        print(f"\nsilent node first: ready after {took:.1f} s, logins on the silent node: {silent_node.logins}")
        assert silent_node.logins >= 1, "the gateway never tried the silent node (listed first)"
        assert ready, f"not ready {READY_WITHIN_SECONDS} s after start with a silent node first:\n{process.tail(30)}"
        app = stack.create_app(name="silent-node")
        resp = client.sign_up(app, email=unique_email("silent"))
        assert resp.status == 201, resp.body
    finally:
        process.stop()
