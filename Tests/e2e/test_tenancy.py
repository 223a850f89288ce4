"""Apps are tenants: the same email in two apps is two unrelated accounts, and nothing issued
by one app is accepted by another."""

from identity_client import assert_problem, unique_email, unique_username
from jwt_tools import verify_rs256


def test_same_email_in_two_apps_is_two_users(client, app, other_app):
    email = unique_email()
    a = client.sign_up(app, email=email, password="Apple-Orchard-11")
    b = client.sign_up(other_app, email=email, password="Banana-Grove-22")
    assert a.status == 201, a
    assert b.status == 201, b
    assert a.data["user"]["uid"] != b.data["user"]["uid"]
    # Each account answers to its own password only, in its own app.
    ok_a = client.sign_in(app, email=email, password="Apple-Orchard-11")
    ok_b = client.sign_in(other_app, email=email, password="Banana-Grove-22")
    assert ok_a.status == 200 and ok_a.data["user"]["uid"] == a.data["user"]["uid"]
    assert ok_b.status == 200 and ok_b.data["user"]["uid"] == b.data["user"]["uid"]
    assert_problem(client.sign_in(app, email=email, password="Banana-Grove-22"), 401,
                   "auth/invalid-credential")
    assert_problem(client.sign_in(other_app, email=email, password="Apple-Orchard-11"), 401,
                   "auth/invalid-credential")


def test_same_username_in_two_apps_is_fine(client, app, other_app):
    username = unique_username()
    client.new_user(app, username=username)
    client.new_user(other_app, username=username)


def test_user_of_one_app_cannot_sign_in_through_another(client, app, other_app):
    email = unique_email()
    username = unique_username()
    client.new_user(app, email=email, username=username)
    assert_problem(client.sign_in(other_app, email=email), 401, "auth/invalid-credential")
    assert_problem(client.sign_in(other_app, identifier=username), 401, "auth/invalid-credential")


def test_token_of_one_app_is_refused_by_another(client, app, other_app):
    token_a = client.new_user(app)["access_token"]
    token_b = client.new_user(other_app)["access_token"]
    assert_problem(client.me(other_app, token_a), 401, "auth/invalid-token")
    assert_problem(client.me(app, token_b), 401, "auth/invalid-token")
    assert_problem(client.patch_me(other_app, token_a, {"first_name": "Mallory"}), 401,
                   "auth/invalid-token")
    # Still fine where it belongs, and untouched by the refused PATCH.
    resp = client.me(app, token_a)
    assert resp.status == 200 and resp.data["first_name"] is None, resp


def test_apps_have_their_own_signing_keys(client, app, other_app):
    token_a = client.new_user(app)["access_token"]
    client.new_user(other_app)
    jwks_a = client.get(f"/v1/apps/{app['app_id']}/jwks.json").json
    jwks_b = client.get(f"/v1/apps/{other_app['app_id']}/jwks.json").json
    assert verify_rs256(token_a, jwks_a)
    assert {k["n"] for k in jwks_a["keys"]}.isdisjoint({k["n"] for k in jwks_b["keys"]})
    # Even a kid clash could not make B's keys vouch for A's token.
    forged_jwks = {"keys": [dict(k, kid=ka["kid"]) for k in jwks_b["keys"] for ka in jwks_a["keys"]]}
    assert not verify_rs256(token_a, forged_jwks)


def test_apps_have_distinct_ids_and_keys(app, other_app):
    for key in ("app_id", "app_key", "secret_key", "issuer"):
        assert app[key] != other_app[key], key
