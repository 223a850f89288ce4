"""identityctl users import: users with password hashes from other systems
sign in with their old passwords, and that first sign-in leaves an Argon2id hash in their place;
each line is all or nothing and refused lines are reported by line."""

import base64
import hashlib
import json
import os
import tempfile

import pytest
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

import db_tools
from identity_client import assert_problem, unique_email

# Firebase's published vector (github.com/firebase/scrypt): the project's hash parameters and
# one exported user.
FIREBASE = {"signer_key": "jxspr8Ki0RYycVU8zykbdLGjFQ3McFUH0uiiTvC8pVMXAn210wjLNmdZJzxUECKbm0QsEmYUSDzZvpjeJ9WmXA==",
            "salt_separator": "Bw==", "rounds": 8, "memory_cost": 14}


def b64(raw):
    return base64.b64encode(raw).decode()


def firebase_scrypt(password, salt, signer_key, separator, rounds, memory_cost):
    """Firebase's modified scrypt, written here from its description with Python's own scrypt
    and the cryptography package: an independent check of the service's implementation."""
    derived = hashlib.scrypt(password.encode(), salt=salt + separator, n=2 ** memory_cost, r=rounds, p=1,
                             dklen=64, maxmem=64 * 1024 * 1024)
    encryptor = Cipher(algorithms.AES(derived[:32]), modes.CTR(b"\0" * 16)).encryptor()
    return encryptor.update(signer_key) + encryptor.finalize()


def hash_kinds():
    """(kind, password, password_hash object) for every algorithm the import takes."""
    salt = os.urandom(16)
    kinds = [
        # Openwall's crypt_blowfish vectors, as $2a$, $2y$ and (pyca/bcrypt's) $2b$.
        ("bcrypt-2a", "U*U", {"algorithm": "bcrypt", "hash": "$2a$05$CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOeW"}),
        ("bcrypt-2y", "U*U*", {"algorithm": "bcrypt", "hash": "$2y$05$CCCCCCCCCCCCCCCCCCCCC.VGOzA784oUp/Z0DY336zx7pLYAy0lwK"}),
        ("bcrypt-2b", "J8eHUDuxBB520", {"algorithm": "bcrypt", "hash": "$2b$04$VvlCUKbTMjaxaYJ.k5juoecpG/7IzcH1AkmqKi.lIZMVIOLClWAk."}),
        ("scrypt", "scrypt pass 1", {"algorithm": "scrypt", "salt": b64(salt), "n": 16384, "r": 8, "p": 1,
                                     "hash": b64(hashlib.scrypt(b"scrypt pass 1", salt=salt, n=16384, r=8, p=1, dklen=32))}),
        ("firebase-vector", "user1password",
         {"algorithm": "firebase_scrypt", "salt": "42xEC+ixf3L2lw==", **FIREBASE,
          "hash": "lSrfV15cpx95/sZS2W9c9Kp6i/LVgQNDNC/qzrCnh1SAyZvqmZqAjTdn3aoItz+VHjoZilo78198JAdRuid5lQ=="}),
        ("firebase", "firebase pass 2",
         {"algorithm": "firebase_scrypt", "salt": b64(salt), **FIREBASE,
          "hash": b64(firebase_scrypt("firebase pass 2", salt, base64.b64decode(FIREBASE["signer_key"]),
                                      base64.b64decode(FIREBASE["salt_separator"]), 8, 14))}),
        ("pbkdf2-sha256", "pbkdf2 pass 3", {"algorithm": "pbkdf2_sha256", "salt": b64(salt), "iterations": 10000,
                                            "hash": b64(hashlib.pbkdf2_hmac("sha256", b"pbkdf2 pass 3", salt, 10000))}),
        ("pbkdf2-sha1", "pbkdf2 pass 4", {"algorithm": "pbkdf2_sha1", "salt": b64(salt), "iterations": 10000,
                                          "hash": b64(hashlib.pbkdf2_hmac("sha1", b"pbkdf2 pass 4", salt, 10000))}),
        # The reference implementation's PHC vectors (argon2 src/test.c, libxcrypt).
        ("argon2i", "password", {"algorithm": "argon2i",
                                 "hash": "$argon2i$v=19$m=256,t=2,p=1$c29tZXNhbHQ$iekCn0Y3spW+sCcFanM2xBT63UP2sghkUoHLIUpWRS8"}),
        ("argon2id", "password", {"algorithm": "argon2id",
                                  "hash": "$argon2id$v=19$m=256,t=2,p=1$c29tZXNhbHQ$nf65EOgLrQMR/uIPnA4rEsF5h7TKyQwu9U1bMCHGi/4"}),
    ]
    return kinds


# The vectors below the import floor (ImportedPasswordHash.weakness): bcrypt at cost 4-5, PBKDF2
# at 10,000 iterations, Argon2 at 256 KiB. The other kinds meet it.
WEAK_KINDS = {"bcrypt-2a", "bcrypt-2y", "bcrypt-2b", "pbkdf2-sha256", "pbkdf2-sha1", "argon2i", "argon2id"}


def run_import(stack, app, lines, allow_weak=True):
    with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as handle:
        for line in lines:
            handle.write((line if isinstance(line, str) else json.dumps(line)) + "\n")
        path = handle.name
    try:
        done = stack.ctl("users", "import", app["app_id"], path, *(["--allow-weak-hashes"] if allow_weak else []))
    finally:
        os.unlink(path)
    assert done.stdout.strip(), f"identityctl users import printed nothing:\n{done.stderr}"
    return done.returncode, json.loads(done.stdout)


def stored_hash(app, email):
    return db_tools.value(f"SELECT password_hash FROM users WHERE app_id = {db_tools.literal(app['app_id'])} "
                          f"AND lower(email) = lower({db_tools.literal(email)})")


def test_each_hash_kind_signs_in_with_its_old_password_and_ends_as_argon2id(client, stack, app):
    kinds = hash_kinds()
    users = [{"email": unique_email(kind), "email_verified": True, "first_name": kind, "password_hash": hashed}
             for kind, _, hashed in kinds]
    code, report = run_import(stack, app, users)
    assert code == 0 and report["imported"] == len(kinds) and report["errors"] == [], report
    assert report["weak_hashes"] == len(WEAK_KINDS), report
    assert [entry["line"] for entry in report["users"]] == list(range(1, len(kinds) + 1))

    for (kind, password, hashed), user in zip(kinds, users):
        before = stored_hash(app, user["email"])
        assert not before.startswith("$argon2id$v=19$m=1024") or kind == "argon2id", (kind, before)
        # A wrong password is refused and changes nothing.
        assert_problem(client.sign_in(app, email=user["email"], password=password + "x"), 401, "auth/invalid-credential")
        assert stored_hash(app, user["email"]) == before, kind
        resp = client.sign_in(app, email=user["email"], password=password)
        assert resp.status == 200, (kind, resp)
        assert resp.data["user"]["first_name"] == kind and resp.data["user"]["email_verified"] is True
        after = stored_hash(app, user["email"])
        assert after.startswith("$pepper-v1$argon2id$") and after != before, (kind, after)
        # The new hash is the service's own: the same password signs in again, a wrong one does not.
        assert client.sign_in(app, email=user["email"], password=password).status == 200, kind
        assert stored_hash(app, user["email"]) == after, kind
        assert_problem(client.sign_in(app, email=user["email"], password=password + "x"), 401, "auth/invalid-credential")


def test_refused_lines_are_reported_and_leave_nothing_behind(client, stack, app, events):
    taken = client.new_user(app)["user"]["email"]
    google_subject = f"g-{os.urandom(6).hex()}"
    good = {"email": unique_email("good"), "password_hash": hash_kinds()[0][2],
            "providers": [{"provider": "google", "subject": google_subject}]}
    lines = [
        good,
        {"email": taken, "password_hash": hash_kinds()[0][2]},                        # line 2: email taken
        {"email": unique_email("alg"), "password_hash": {"algorithm": "md5", "hash": "x"}},  # 3: unknown algorithm
        "{not json",                                                                  # 4
        {"email": unique_email("cost"), "password_hash": {"algorithm": "bcrypt", "hash":
            "$2b$31$VvlCUKbTMjaxaYJ.k5juoecpG/7IzcH1AkmqKi.lIZMVIOLClWAk."}},        # 5: cost 31
        {"email": unique_email("mfa"), "mfa": {"totp_secret": "JBSWY3DPEHPK3PXP"}},   # 6: MFA not yet
        # 7: the identity is the first line's: the whole user is refused, email included.
        {"email": unique_email("dup"), "providers": [{"provider": "google", "subject": google_subject}]},
        {"email": unique_email("scrypt"), "password_hash": {"algorithm": "scrypt", "salt": "c2FsdA==", "n": 2 ** 22,
                                                            "r": 8, "p": 1, "hash": b64(b"x" * 32)}},  # 8: 4 GiB
        {"email": unique_email("extra"), "is_admin": True},                           # 9: unknown field
    ]
    code, report = run_import(stack, app, lines)
    assert code == 1, report
    assert report["imported"] == 1 and [u["line"] for u in report["users"]] == [1], report
    errors = {error["line"]: error for error in report["errors"]}
    assert sorted(errors) == [2, 3, 4, 5, 6, 7, 8, 9], report
    assert errors[2]["code"] == "import/email-taken"
    assert errors[3]["code"] == "import/invalid-user" and errors[3]["field"] == "/password_hash/algorithm"
    assert errors[4]["code"] == "import/invalid-user"
    assert errors[5]["field"] == "/password_hash"
    assert errors[6]["code"] == "import/unsupported"
    assert errors[7]["code"] == "import/identity-taken"
    assert errors[8]["field"] == "/password_hash"
    assert errors[9]["field"] == "/is_admin"
    dup_email = lines[6]["email"]
    assert db_tools.value(f"SELECT count(*) FROM users WHERE app_id = {db_tools.literal(app['app_id'])} "
                          f"AND email = {db_tools.literal(dup_email)}") == "0"
    # The imported user has its Google identity and one user.created event.
    uid = report["users"][0]["uid"]
    assert db_tools.value(f"SELECT provider || ':' || subject FROM user_identities WHERE app_id = "
                          f"{db_tools.literal(app['app_id'])} AND uid = {db_tools.literal(uid)}") == f"google:{google_subject}"
    events.wait_for("user.created", lambda body: body.get("uid") == uid)
    resp = client.sign_in(app, email=good["email"], password="U*U")
    assert resp.status == 200, resp
    assert sorted(resp.data["user"]["providers"]) == ["google", "password"], resp.data["user"]


def test_import_keeps_given_uids_and_refuses_a_taken_one(client, stack, app):
    uid = f"fb-{os.urandom(6).hex()}"
    code, report = run_import(stack, app, [{"uid": uid, "email": unique_email("uid")}])
    assert code == 0 and report["users"][0]["uid"] == uid, report
    code, report = run_import(stack, app, [{"uid": uid, "email": unique_email("uid2")}])
    assert code == 1 and report["errors"][0]["code"] == "import/uid-taken", report


def test_imported_users_belong_to_their_app_only(client, stack, app, app_factory):
    other = app_factory()
    email = unique_email("tenant")
    code, report = run_import(stack, app, [{"email": email, "password_hash": hash_kinds()[0][2]}])
    assert code == 0, report
    assert_problem(client.sign_in(other, email=email, password="U*U"), 401, "auth/invalid-credential")
    assert client.sign_in(app, email=email, password="U*U").status == 200


# --- POST /v1/admin/users/import ----------------------------------------------------------------

def test_admin_import_route_imports_each_hash_kind_and_reports_by_index(client, app, other_app):
    from admin_tools import admin, audit_rows
    kinds = hash_kinds()
    users = [{"email": unique_email(kind), "password_hash": hashed} for kind, _, hashed in kinds]
    users.append({"email": users[0]["email"], "password_hash": kinds[0][2]})  # taken by the first
    resp = admin(client, app, "POST", "/v1/admin/users/import", {"users": users, "allow_weak_hashes": True})
    assert resp.status == 200, resp
    report = resp.data
    assert report["imported"] == len(kinds) and report["failed"] == 1, report
    assert report["weak_hashes"] == len(WEAK_KINDS), report
    assert report["errors"] == [{"index": len(kinds), "code": "import/email-taken", "field": "/email",
                                 "detail": "the email is taken"}], report
    for (kind, password, _), user in zip(kinds, users):
        signed_in = client.sign_in(app, email=user["email"], password=password)
        assert signed_in.status == 200, (kind, signed_in)
        assert stored_hash(app, user["email"]).startswith("$pepper-v1$argon2id$"), kind
    # Audited as the key's call; another app's key imports into its own app only.
    assert any(row["action"] == "admin.users.import" for row in audit_rows(client, app, action="admin.users.import"))
    theirs = admin(client, other_app, "POST", "/v1/admin/users/import", {"users": [{"email": users[1]["email"]}]})
    assert theirs.status == 200 and theirs.data["imported"] == 1, theirs
    assert_problem(client.sign_in(other_app, email=users[1]["email"], password=kinds[1][1]), 401, "auth/invalid-credential")


def test_admin_import_route_takes_1000_users_in_one_call(client, app):
    from admin_tools import admin
    bcrypt = hash_kinds()[0][2]
    users = [{"email": unique_email(f"bulk{i}"), "first_name": "Bulk", "password_hash": bcrypt} for i in range(1000)]
    body = json.dumps({"users": users})
    assert len(body) > 64 * 1024, "larger than the ordinary body cap"
    resp = admin(client, app, "POST", "/v1/admin/users/import", {"users": users, "allow_weak_hashes": True}, timeout=120)
    assert resp.status == 200 and resp.data["imported"] == 1000, resp
    assert client.sign_in(app, email=users[999]["email"], password="U*U").status == 200


def test_admin_import_route_refuses_bad_bodies_and_non_admin_credentials(client, app):
    from admin_tools import admin
    too_many = [{"email": f"x{i}@example.com"} for i in range(1001)]
    for body in ({}, {"users": []}, {"users": "x"}, {"users": [1]}, {"users": [{"email": "a@b.co"}], "x": 1},
                 {"users": too_many}, {"users": [{"email": "a@b.co"}], "allow_weak_hashes": "yes"}):
        assert_problem(admin(client, app, "POST", "/v1/admin/users/import", body), 422, "auth/validation-failed")
    signed_up = client.new_user(app)
    resp = client.post("/v1/admin/users/import", {"users": [{"email": unique_email()}]},
                       token=signed_up["access_token"], app_key=app["app_key"])
    assert_problem(resp, 401, "auth/invalid-secret-key")


def test_hashes_below_the_floor_are_imported_only_when_asked(client, stack, app):
    """A legacy hash an attacker with the old table cracks first (bcrypt cost 4, PBKDF2 with
    10,000 iterations, Argon2 at 256 KiB) is refused with import/weak-hash unless the import says
    allow_weak_hashes; then it is counted in the report. Hashes at the floor are imported either way."""
    from admin_tools import admin
    kinds = hash_kinds()
    users = [{"email": unique_email(kind), "password_hash": hashed} for kind, _, hashed in kinds]
    resp = admin(client, app, "POST", "/v1/admin/users/import", {"users": users})
    assert resp.status == 200, resp
    refused = {kinds[error["index"]][0] for error in resp.data["errors"]}
    assert refused == WEAK_KINDS, resp.data
    assert all(error["code"] == "import/weak-hash" and error["field"] == "/password_hash"
               and "allow_weak_hashes" in error["detail"] for error in resp.data["errors"]), resp.data
    assert resp.data["imported"] == len(kinds) - len(WEAK_KINDS) and resp.data["weak_hashes"] == 0, resp.data
    for (kind, password, _), user in zip(kinds, users):
        expected = 401 if kind in WEAK_KINDS else 200
        assert client.sign_in(app, email=user["email"], password=password).status == expected, kind
    # The file import says the same, and exits 1 for the refused lines.
    code, report = run_import(stack, app, [{"email": unique_email("weak-file"), "password_hash": kinds[0][2]}],
                              allow_weak=False)
    assert code == 1 and report["errors"][0]["code"] == "import/weak-hash" and report["weak_hashes"] == 0, report
