"""The broker user of each process kind (scripts/broker-users.sh defines them; services.sh puts
their URLs in .run/env as IDENTITY_AMQP_URL_<KIND>, on vhost /). The harness connects each process
with its own user on IDENTITY_AMQP_URL's vhost; IDENTITY_AMQP_URL itself is guest's, for the
harness's own checks."""

import os

KINDS = {"identity-gateway": "GATEWAY", "identity-token-worker": "TOKEN_WORKER",
         "identity-provider-worker": "PROVIDER_WORKER", "identity-mailer-worker": "MAILER_WORKER",
         "identity-revocation-worker": "REVOCATION_WORKER", "identityctl": "IDENTITYCTL",
         "identity-events-reader": "EVENTS_READER"}


def has_users():
    return all(os.environ.get("IDENTITY_AMQP_URL_" + kind) for kind in KINDS.values())


def amqp_url(user):
    """That user's URL (a key of KINDS) on IDENTITY_AMQP_URL's vhost; IDENTITY_AMQP_URL itself
    (guest) when the harness gave no per-kind URLs (an old .run/env)."""
    base = os.environ["IDENTITY_AMQP_URL"]
    own = os.environ.get("IDENTITY_AMQP_URL_" + KINDS[user])
    if not own:
        return base
    return own.rsplit("/", 1)[0] + "/" + base.rsplit("/", 1)[1]
