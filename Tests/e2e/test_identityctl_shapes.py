"""identityctl prints what the admin API answers: for every command with an admin-API twin, the
same JSON object (the same fields, the same types, the same values where they do not change
from one call to the next), so a script can move from one to the other unchanged."""

import json

from admin_tools import admin


def shape(value):
    """The fields and their JSON types, recursively (lists by their first item)."""
    if isinstance(value, dict):
        return {key: shape(item) for key, item in value.items()}
    if isinstance(value, list):
        return [shape(value[0])] if value else []
    return type(value).__name__


def ctl_json(stack, *args):
    done = stack.ctl(*args)
    assert done.returncode == 0, f"identityctl {args}: {done.stderr}"
    return json.loads(done.stdout)


def test_secret_key_rotation(stack, client, app):
    printed = ctl_json(stack, "apps", "rotate-secret-key", app["app_id"], "--overlap", "60")
    answered = admin(client, app, "POST", "/v1/admin/secret-keys/rotate", {"overlap_seconds": 60},
                     key=printed["secret_key"])
    assert answered.status == 201, answered
    assert shape(printed) == shape(answered.data), (printed, answered.data)


def test_signing_key_rotation(stack, client, app, other_app):
    printed = ctl_json(stack, "keys", "rotate", app["app_id"])
    # Another app: a second rotation waits for the first key to sign.
    answered = admin(client, other_app, "POST", "/v1/admin/keys/rotate", {})
    assert answered.status == 201, answered
    assert shape(printed) == shape(answered.data), (printed, answered.data)


def test_hooks(stack, client, app):
    printed = ctl_json(stack, "hooks", "set", app["app_id"], "before_sign_up", "--url", "https://hooks.example/a")
    answered = admin(client, app, "PUT", "/v1/admin/hooks/before_token", {"url": "https://hooks.example/b"})
    assert answered.status in (200, 201), answered
    assert shape(printed) == shape(answered.data), (printed, answered.data)
    listed = ctl_json(stack, "hooks", "list", app["app_id"])
    answered = admin(client, app, "GET", "/v1/admin/hooks")
    assert answered.status == 200, answered
    assert listed == answered.data


def test_webhooks(stack, client, app):
    printed = ctl_json(stack, "webhooks", "create", app["app_id"], "--url", "https://hooks.example/w",
                       "--events", "user.created")
    answered = admin(client, app, "POST", "/v1/admin/webhooks", {"url": "https://hooks.example/v", "events": ["user.created"]})
    assert answered.status == 201, answered
    assert shape(printed) == shape(answered.data), (printed, answered.data)
    listed = ctl_json(stack, "webhooks", "list", app["app_id"])
    answered = admin(client, app, "GET", "/v1/admin/webhooks")
    assert answered.status == 200, answered
    assert listed == answered.data
    rotated = ctl_json(stack, "webhooks", "rotate-secret", app["app_id"], printed["id"], "--overlap", "60")
    answered = admin(client, app, "POST", f"/v1/admin/webhooks/{printed['id']}/rotate-secret", {"overlap_seconds": 60})
    assert answered.status == 200, answered
    assert shape(rotated) == shape(answered.data), (rotated, answered.data)


def test_settings(stack, client, app):
    printed = ctl_json(stack, "apps", "settings", app["app_id"])
    answered = admin(client, app, "GET", "/v1/admin/settings")
    assert answered.status == 200, answered
    assert printed == answered.data
