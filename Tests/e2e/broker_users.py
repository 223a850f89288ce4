"""The broker user of each process kind (scripts/broker-users.sh defines them; services.sh puts
their URLs in .run/env as IDENTITY_AMQP_URL_<KIND>, on vhost /). The harness connects each process
with its own user on IDENTITY_AMQP_URL's vhost; IDENTITY_AMQP_URL itself is guest's, for the
harness's own checks. A kind newer than the .run/env at hand gets its URL from the password file
(IDENTITY_RUN_DIR/amqp-users), where the harness's reset-vhost put its password."""

import os
import urllib.parse

KINDS = {"identity-gateway": "GATEWAY", "identity-token-worker": "TOKEN_WORKER",
         "identity-provider-worker": "PROVIDER_WORKER", "identity-mailer-worker": "MAILER_WORKER",
         "identity-revocation-worker": "REVOCATION_WORKER", "identityctl": "IDENTITYCTL",
         "identity-events-reader": "EVENTS_READER", "identity-webhook-worker": "WEBHOOK_WORKER"}


def _from_password_file(user):
    run_dir = os.environ.get("IDENTITY_RUN_DIR")
    if not run_dir:
        return None
    try:
        with open(os.path.join(run_dir, "amqp-users"), encoding="utf-8") as f:
            passwords = dict(line.split() for line in f if len(line.split()) == 2)
    except OSError:
        return None
    if user not in passwords:
        return None
    base = urllib.parse.urlsplit(os.environ["IDENTITY_AMQP_URL"])
    return (f"amqp://{urllib.parse.quote(user, safe='')}:{urllib.parse.quote(passwords[user], safe='')}"
            f"@{base.hostname}:{base.port}/%2F")


def _own(user):
    return os.environ.get("IDENTITY_AMQP_URL_" + KINDS[user]) or _from_password_file(user)


def has_users():
    return all(_own(user) for user in KINDS)


def amqp_url(user):
    """That user's URL (a key of KINDS) on IDENTITY_AMQP_URL's vhost; IDENTITY_AMQP_URL itself
    (guest) when the harness gave no per-kind URLs (an old .run/env)."""
    base = os.environ["IDENTITY_AMQP_URL"]
    own = _own(user)
    if not own:
        return base
    return own.rsplit("/", 1)[0] + "/" + base.rsplit("/", 1)[1]
