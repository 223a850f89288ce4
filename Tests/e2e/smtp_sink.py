"""A local SMTP server that keeps every message the service sends (the mailer worker's SMTP
server in these tests): plain SMTP on 127.0.0.1, no TLS, no AUTH.

It runs inside the pytest process (an aiosmtpd Controller: an asyncio loop in a background
thread) and the service is pointed at it through IDENTITY_SMTP_* (see `env()`). Like the
provider stand-in, `stop()` closes the listening socket (and the open sessions), so a stopped
sink is a refused connection; `start()` listens again on the same port.

Every accepted message is parsed (`email`, policy.default: encoded headers and
quoted-printable/base64 bodies decoded) into a `Message`. RCPT for addresses given to
`reject()` answers 550 (a permanent refusal); those attempts are recorded too.
"""

import re
import socket
import threading
import time
from dataclasses import dataclass, field
from email import message_from_bytes, policy
from email.utils import getaddresses, parseaddr

from aiosmtpd.controller import Controller

HOST = "127.0.0.1"
SERVER_HOSTNAME = "sink.tests.example"  # the banner's name (no getfqdn() DNS lookup)
CODE_RE = re.compile(r"\b(\d{6})\b")


def _free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((HOST, 0))
        return sock.getsockname()[1]


def _norm(address):
    return (address or "").strip().lower()


@dataclass
class Message:
    """One accepted message. `to` is the bare address of the To header (the first one; the
    envelope recipient when there is no To header); `from_header` the decoded From header
    (`Name <address>`), split into `from_name` and `from_address`; `text` and `html` the decoded
    text/plain and text/html parts with "\n" line ends (None when absent); `raw` the bytes as
    received."""
    seq: int                      # 1, 2, 3, ... in order of acceptance (across all recipients)
    to: str
    to_header: str
    from_header: str
    from_name: str
    from_address: str
    subject: str
    text: object
    html: object
    envelope_from: str
    envelope_to: list
    raw: bytes = field(repr=False)
    parsed: object = field(repr=False, default=None)  # the email.message.EmailMessage
    received_at: float = 0.0      # time.monotonic() at acceptance

    @property
    def kind(self):
        """The mailer's X-Identity-Mail-Kind header (email_code, security_alert_..., ...)."""
        return str(self.parsed.get("X-Identity-Mail-Kind", "") or "") if self.parsed is not None else ""

    @property
    def is_alert(self):
        """A security alert: on by default, so it arrives beside most flows' codes and links."""
        return self.kind.startswith("security_alert_")

    def addressed_to(self, address):
        address = _norm(address)
        return _norm(self.to) == address or address in (_norm(a) for a in self.envelope_to) \
            or address in (_norm(a) for _, a in getaddresses([self.to_header or ""]))

    def summary(self):
        return (f"#{self.seq} to={self.to} from={self.from_header!r} subject={self.subject!r} "
                f"text={(self.text or '')[:160]!r}")


def _part(parsed, subtype):
    body = parsed.get_body(preferencelist=(subtype,))
    if body is None or body.get_content_type() != f"text/{subtype}":
        return None
    try:
        content = body.get_content()
    except (LookupError, ValueError):  # an unknown charset: keep what can be read
        content = (body.get_payload(decode=True) or b"").decode("utf-8", "replace")
    return content.replace("\r\n", "\n")


def parse_message(seq, raw, envelope_from, envelope_to):
    parsed = message_from_bytes(raw, policy=policy.default)
    to_header = str(parsed.get("To", "") or "")
    to_addresses = [a for _, a in getaddresses([to_header]) if a]
    from_header = str(parsed.get("From", "") or "")
    from_name, from_address = parseaddr(from_header)
    return Message(seq=seq, to=to_addresses[0] if to_addresses else (envelope_to or [""])[0],
                   to_header=to_header, from_header=from_header, from_name=from_name,
                   from_address=from_address, subject=str(parsed.get("Subject", "") or ""),
                   text=_part(parsed, "plain"), html=_part(parsed, "html"),
                   envelope_from=envelope_from, envelope_to=list(envelope_to), raw=raw,
                   parsed=parsed, received_at=time.monotonic())


def code_from(message):
    """The 6-digit code in a message's text part (the first one; fails when there is none)."""
    text = message.text if isinstance(message, Message) else message
    assert text, f"the message has no text part: {message!r}"
    found = CODE_RE.search(text)
    assert found, f"no 6-digit code in the text part: {text[:800]!r}"
    return found.group(1)


class _Handler:
    """aiosmtpd hooks (called on the sink's event-loop thread)."""

    def __init__(self, sink):
        self.sink = sink

    async def handle_RCPT(self, server, session, envelope, address, rcpt_options):
        if self.sink._rcpt(address):
            envelope.rcpt_tos.append(address)
            return "250 OK"
        return "550 5.1.1 <%s>: recipient rejected (the sink was told to refuse it)" % address

    async def handle_DATA(self, server, session, envelope):
        raw = envelope.original_content or envelope.content
        if isinstance(raw, str):
            raw = raw.encode("utf-8", "surrogateescape")
        self.sink._accept(raw, envelope.mail_from, envelope.rcpt_tos)
        return "250 Message accepted for delivery"


class SMTPSink:
    """See the module doc. Thread-safe: the SMTP thread and the tests share it."""

    def __init__(self, port=0):
        self.port = port or _free_port()
        self._cond = threading.Condition()
        self._messages = []
        self._rejected = set()
        self._attempts = []   # (monotonic time, address, accepted?) for every RCPT
        self._controller = None

    # --- lifecycle -----------------------------------------------------------------------------

    @property
    def running(self):
        return self._controller is not None

    def start(self):
        """Listens (again) on 127.0.0.1:port; a no-op when already running."""
        if self._controller is not None:
            return
        controller = Controller(_Handler(self), hostname=HOST, port=self.port,
                                server_hostname=SERVER_HOSTNAME, ready_timeout=10)
        controller.start()
        self._controller = controller

    def stop(self):
        """Closes the listening socket and the open sessions: from now on a connection is
        refused. What was received is kept."""
        controller, self._controller = self._controller, None
        if controller is not None:
            controller.stop()

    def env(self):
        """The service's variables that point it at this sink."""
        return {"IDENTITY_SMTP_HOST": HOST, "IDENTITY_SMTP_PORT": str(self.port),
                "IDENTITY_SMTP_TLS": "none"}

    # --- refusing recipients -------------------------------------------------------------------

    def reject(self, *addresses):
        """RCPT TO these addresses (any case) answers 550 until accept() is called for them."""
        with self._cond:
            self._rejected.update(_norm(a) for a in addresses)

    def accept(self, *addresses):
        """Undoes reject() for these addresses (all of them when none is given)."""
        with self._cond:
            if addresses:
                self._rejected.difference_update(_norm(a) for a in addresses)
            else:
                self._rejected.clear()

    def attempts(self, address=None):
        """Every RCPT so far (for that address when given): (monotonic time, address, accepted)."""
        with self._cond:
            return [a for a in self._attempts if address is None or _norm(a[1]) == _norm(address)]

    # --- what arrived --------------------------------------------------------------------------

    def mark(self):
        """The seq of the newest message so far (0 when none): wait_for(..., after=mark) then
        only looks at what arrives later."""
        with self._cond:
            return self._messages[-1].seq if self._messages else 0

    def messages(self):
        with self._cond:
            return list(self._messages)

    def messages_to(self, address, after=0, alerts=False):
        """Every message to that address (any case) so far, oldest first; security alerts only
        with `alerts` (they come beside most flows' mail, since apps have them on by default)."""
        with self._cond:
            return [m for m in self._messages if m.seq > after and m.addressed_to(address)
                    and (alerts or not m.is_alert)]

    def first(self, to, predicate=None, timeout=0.0, after=0):
        """The first message to `to` (seq above `after`) satisfying predicate(message), waiting
        up to timeout seconds; None when none came. Without a predicate, security alerts are
        passed over (a test that wants one says which, by its predicate)."""
        if predicate is None:
            predicate = lambda message: not message.is_alert  # noqa: E731
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                for message in self._messages:
                    if message.seq > after and message.addressed_to(to) and \
                            (predicate is None or predicate(message)):
                        return message
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return None
                self._cond.wait(min(remaining, 0.25))

    def wait_for(self, to, predicate=None, timeout=10, after=0):
        """The first message to `to` (already received or arriving within timeout seconds)
        satisfying predicate(message); fails the test otherwise."""
        found = self.first(to, predicate, timeout, after)
        if found is not None:
            return found
        seen = "\n".join(m.summary() for m in self.messages()[-20:]) or "(nothing at all)"
        raise AssertionError(f"no matching mail to {to!r} within {timeout}s (sink running="
                             f"{self.running}, RCPT attempts for it: {self.attempts(to)}); "
                             f"the last messages received:\n{seen}")

    def collect_to(self, address, seconds, after=0, alerts=False):
        """Waits `seconds`, then returns every message to that address (seq above `after`)."""
        time.sleep(seconds)
        return self.messages_to(address, after, alerts)

    def summary(self):
        with self._cond:
            last = [m.summary() for m in self._messages[-5:]]
            refused = [a for a in self._attempts if not a[2]][-5:]
            return (f"running={self.running} port={self.port} messages={len(self._messages)} "
                    f"rejecting={sorted(self._rejected)}\nlast messages: {last}\n"
                    f"last refused RCPTs: {refused}")

    # --- called from the SMTP thread -----------------------------------------------------------

    def _rcpt(self, address):
        with self._cond:
            accepted = _norm(address) not in self._rejected
            self._attempts.append((time.monotonic(), address, accepted))
            return accepted

    def _accept(self, raw, mail_from, rcpt_tos):
        message = parse_message(0, raw, mail_from, rcpt_tos)
        with self._cond:
            message.seq = len(self._messages) + 1
            self._messages.append(message)
            self._cond.notify_all()
