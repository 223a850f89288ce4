#!/usr/bin/env bash
# One RabbitMQ user per process kind, with permissions limited to the queues and exchanges it
# uses (docs/architecture.md, "Broker users"). This file is the one definition of those users:
# scripts/services.sh applies it to every vhost it makes (make run, make test, make bench), and a
# deployment applies it to its own broker the same way.
#
#   scripts/broker-users.sh definitions VHOST PASSWORD_FILE    print RabbitMQ definitions (JSON:
#                                                              users and their permissions on VHOST)
#   scripts/broker-users.sh apply VHOST PASSWORD_FILE          import them in one call:
#                                                              ${RABBITMQCTL:-rabbitmqctl} import_definitions
#   scripts/broker-users.sh urls VHOST PASSWORD_FILE HOST:PORT print `export IDENTITY_AMQP_URL_<KIND>=…`
#
# PASSWORD_FILE holds one `user password` line per user; a user missing from it gets a random
# password, appended (the file is created 0600). Users are broker-wide, permissions per vhost.
# Only these users are created or changed (password, permissions on VHOST); others (guest, an
# administrator) are left alone.
#
# What RabbitMQ 3.10 checks (see Tests/e2e/test_broker_permissions.py): a publish on the default
# exchange is a write on `amq.default` whatever the routing key (not a write on the queue);
# declaring a queue whose dead-letter exchange is "" is also a write on `amq.default` (and a
# read on the queue); consuming direct reply-to (`amq.rabbitmq.reply-to`) needs no permission.
set -euo pipefail

usage() { echo "usage: $0 definitions|apply VHOST PASSWORD_FILE | urls VHOST PASSWORD_FILE HOST:PORT" >&2; exit 2; }
[[ $# -ge 3 ]] || usage
cmd=$1 vhost=$2 password_file=$3 hostport=${4:-}

definitions() {
    python3 - "$@" <<'PY'
import base64, hashlib, json, os, secrets, sys, urllib.parse

cmd, vhost, password_file, hostport = sys.argv[1:5]
# Command queues; identity.mailer.commands is the mailer's queue of the previous version (the
# email channel drains it during an upgrade), identity.mailer.<channel> the channels' queues.
C = r"(identity\.(token|provider|revocation|mailer)\.commands|identity\.mailer\.(email|push|sms))"
# The mailer's channels: each channel's queue, delay queues and dead letters, its exchange, and
# the previous version's queue names (drained and replayed during an upgrade).
MAILER = (r"^identity\.mailer\.((email|push|sms)(\.dead|\.delay\.[0-9]+)?"
          r"|commands|dead|delay\.[0-9]+|direct)$")
REVOCATION = r"^identity\.revocation\.(commands|dead|retry\.[0-9]+)$"
# user: (configure, write, read), each a regex over queue and exchange names.
USERS = {
    # Declares every command queue (a command waits for a worker that has not started yet) and
    # publishes commands on the default exchange; its direct reply-to consumer needs nothing.
    "identity-gateway": (f"^{C}$", r"^amq\.default$", "^$"),
    # Consumes token commands; replies (direct reply-to) and mail commands: default exchange.
    # (It declares its dead-letter queue identity.token.dead, where the broker's policy moves a
    # command past its delivery limit.)
    "identity-token-worker": (r"^identity\.token\.(commands|dead)$", r"^amq\.default$", r"^identity\.token\.(commands|dead)$"),
    # Consumes provider commands; replies and Apple revocation commands: default exchange.
    "identity-provider-worker": (r"^identity\.provider\.(commands|dead)$", r"^amq\.default$",
                                 r"^identity\.provider\.(commands|dead)$"),
    # Consumes mail commands and never replies; its retries and dead letters go through its own
    # exchange identity.mailer.direct, so it has no write on amq.default: it cannot publish to
    # any queue but its own.
    "identity-mailer-worker": (MAILER, MAILER, MAILER),
    # Its delay queues dead-letter through the default exchange; the outbox relay declares and
    # publishes identity.events and publishes queued commands on the default exchange; replies.
    "identity-revocation-worker": (f"{REVOCATION}|^identity\\.events$", r"^amq\.default$|^identity\.events$", REVOCATION),
    # Its own queue bound to every event (declaring and binding it: configure and write on the
    # queue, read on the exchange, which it declares too if the relay has not yet); publishes
    # nothing.
    "identity-webhook-worker": (r"^identity\.webhooks\.events(\.dead)?$|^identity\.events$", r"^identity\.webhooks\.events$",
                                r"^identity\.webhooks\.events(\.dead)?$|^identity\.events$"),
    # Operator tool: replays dead letters (basic.get on a dead queue, publish on the default
    # exchange); `bench` uses a scratch queue identity.bench.<pid> and pings the token worker.
    "identityctl": (f"^{C}$|^identity\\.bench\\.[0-9]+$", r"^amq\.default$",
                    r"^identity\.(mailer|revocation)\.dead$|^identity\.mailer\.(email|push|sms)\.dead$"
                    r"|^identity\.bench\.[0-9]+$"),
    # Event consumers: declare, bind (write on the queue, read on the exchange) and consume their
    # own server-named queue. No write on any exchange: they cannot publish anything.
    "identity-events-reader": (r"^amq\.gen-", r"^amq\.gen-", r"^amq\.gen-|^identity\.events$"),
}

# Command queues and where their policy dead-letters a command delivered DELIVERY_LIMIT + 1
# times without an ack (quorum queues count deliveries; the worker itself dead-letters it at
# DELIVERY_LIMIT with an error line, IDENTITY_AMQP_DELIVERY_LIMIT: the broker's limit is the
# backstop). Policies, not declare arguments: every process declaring a command queue (the
# gateway too, which has no read on it and so may not name a dead-letter exchange) declares
# it alike, and an operator can change the limit without a redeploy. BusTopology.deadLetters.
DELIVERY_LIMIT = 5
COMMAND_QUEUES = {
    "identity.token.commands": "identity.token.dead",
    "identity.provider.commands": "identity.provider.dead",
    "identity.revocation.commands": "identity.revocation.dead",
    "identity.mailer.commands": "identity.mailer.dead",
    # The mailer's channels (DeliveryChannel.all): a poisoned delivery to each one's own dead letters.
    "identity.mailer.email": "identity.mailer.email.dead",
    "identity.mailer.push": "identity.mailer.push.dead",
    "identity.mailer.sms": "identity.mailer.sms.dead",
    # An event the webhook worker could not take (it crashed on it every time).
    "identity.webhooks.events": "identity.webhooks.events.dead",
}
POLICIES = [{
    "vhost": vhost, "name": "identity-dead-letters-" + queue.removeprefix("identity.").removesuffix(".commands").replace(".", "-"), "pattern": "^" + queue.replace(".", r"\.") + "$",
    "apply-to": "queues", "priority": 10,
    "definition": {"dead-letter-exchange": "", "dead-letter-routing-key": dead,
                   "delivery-limit": DELIVERY_LIMIT + 1,
                   # A poisoned command must reach its dead-letter queue, not vanish on the way.
                   "dead-letter-strategy": "at-least-once", "overflow": "reject-publish"},
} for queue, dead in COMMAND_QUEUES.items()]

passwords = {}
if os.path.exists(password_file):
    with open(password_file) as f:
        for line in f:
            parts = line.split()
            if len(parts) == 2:
                passwords[parts[0]] = parts[1]
missing = [u for u in USERS if u not in passwords]
if missing:
    fd = os.open(password_file, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    with os.fdopen(fd, "a") as f:
        for user in missing:
            passwords[user] = secrets.token_hex(24)
            f.write(f"{user} {passwords[user]}\n")

if cmd == "urls":
    for user in USERS:
        kind = user.removeprefix("identity-").upper().replace("-", "_")
        url = (f"amqp://{urllib.parse.quote(user, safe='')}:{urllib.parse.quote(passwords[user], safe='')}"
               f"@{hostport}/{urllib.parse.quote(vhost, safe='')}")
        print(f"export IDENTITY_AMQP_URL_{kind}={url}")
    sys.exit(0)

def password_hash(password):
    # rabbit_password_hashing_sha256: base64(salt ++ sha256(salt ++ password)), 4-byte salt.
    salt = secrets.token_bytes(4)
    return base64.b64encode(salt + hashlib.sha256(salt + password.encode()).digest()).decode()

print(json.dumps({
    "users": [{"name": u, "password_hash": password_hash(passwords[u]),
               "hashing_algorithm": "rabbit_password_hashing_sha256", "tags": []} for u in USERS],
    "vhosts": [{"name": vhost}],
    "permissions": [{"user": u, "vhost": vhost, "configure": c, "write": w, "read": r}
                    for u, (c, w, r) in USERS.items()],
    "policies": POLICIES,
}, indent=1))
PY
}

case $cmd in
    definitions) definitions definitions "$vhost" "$password_file" "" ;;
    urls) [[ -n $hostport ]] || usage; definitions urls "$vhost" "$password_file" "$hostport" ;;
    apply)
        defs=$(definitions definitions "$vhost" "$password_file" "")
        # shellcheck disable=SC2086
        printf '%s\n' "$defs" | ${RABBITMQCTL:-rabbitmqctl} import_definitions --format json >/dev/null
        ;;
    *) usage ;;
esac
