"""The smoke a whole stack passes wherever it runs (the image's containers, the systemd units):
an app made with its own identityctl, then sign-up, sign-in, refresh, /me and a mailed code."""

import json

from identity_client import unique_email
from mail_flows import email_code, email_code_signed_in


def sign_up_sign_in_refresh_me_and_an_email_code(client, ctl, mail, label):
    """`ctl(*args)` → identityctl's stdout; `mail`: where the stack's mailer delivers."""
    app = json.loads(ctl("apps", "create", "--name", f"{label}-smoke"))
    email = unique_email(label)
    signed_up = client.wait_for(lambda: (r := client.sign_up(app, email=email)).status != 503 and r,
                                timeout=30)
    assert signed_up and signed_up.status == 201, signed_up
    signed_in = client.sign_in(app, email=email)
    assert signed_in.status == 200, signed_in
    refreshed = client.refresh(app, signed_in.data["refresh_token"])
    assert refreshed.status == 200, refreshed
    me = client.me(app, refreshed.data["access_token"])
    assert me.status == 200, me
    assert me.data["email"] == email, me.data

    code_email = unique_email(f"{label}-code")
    _, code = email_code(client, mail, app, code_email)
    email_code_signed_in(client, app, code_email, code, is_new_user=True)
