#!/usr/bin/env python3
"""Keeps the gateway's binary free of code that touches a secret column (make test runs it; so
can anyone, in about a second).

The gateway never reads a password hash, a refresh-token or code hash, a TOTP secret, a sealed
key or credential (docs/architecture.md; its PostgreSQL role is refused them too). What does is
in the IdentityCredentials module (Package.swift says why each module exists), so:

1. The modules the `identity-gateway` executable links, from `swift package dump-package`
   (every target it depends on, transitively), must not include IdentityCredentials.
2. No Swift file of those modules may name a secret column (`SECRET_COLUMNS`) outside a
   comment, but for the few places in `ALLOWED` that name one for another reason, each with
   that reason.
3. Every listed column is named somewhere in Sources/ (a misspelt entry would guard nothing).

Each check is also run once on a deliberately broken input, which it must refuse: a check that
passes everything is not a check.
"""
import json
import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
GATEWAY = "identity-gateway"
FORBIDDEN = "IdentityCredentials"

# Columns whose values are secrets or stand for them (migrations/), which no code the gateway
# links may name: to read them, or to write them (the gateway writes nothing but audit rows).
SECRET_COLUMNS = {
    "password_hash": "users: Argon2id PHC strings, imported hashes",
    "guest_secret_hmac": "users: the HMAC of a guest's secret",
    "secret_key_hash": "apps: the first secret key's hash",
    "key_hash": "app_secret_keys: secret keys' hashes",
    "private_key_enc": "signing_keys: private signing keys, sealed",
    "apple_private_key_enc": "app_provider_settings: the Apple .p8, sealed",
    "apple_refresh_token_enc": "user_identities: Apple refresh tokens, sealed",
    "apns_private_key_enc": "app_push_settings: the APNs .p8, sealed",
    "fcm_service_account_enc": "app_push_settings: the FCM service account, sealed",
    "auth_token_enc": "app_sms_settings: the SMS account's auth token, sealed",
    "secret_enc": "mfa_factors: TOTP secrets, sealed",
    "code_hmac": "verification_codes, mfa_backup_codes: code HMACs (backup codes' salt beside them)",
    "token_hash": "refresh_tokens, mfa_challenges, sign_in_devices: token hashes",
    "successor_hash": "refresh_tokens: the hash of a rotated token's successor",
    "nonce_hash": "auth_nonces: nonce hashes",
    "challenge_hash": "passkey_flows: WebAuthn challenge hashes",
    "session_token_hash": "sessions: session tokens' hashes",
    "invitation_hash": "console_invitations: the console's invitation links' token hashes",
}

# (file, column): why that file of the gateway's modules names the column all the same.
ALLOWED = {
    ("Sources/IdentityKit/Auth/SessionToken.swift", "session_token_hash"):
        "the gateway finds the live session of the session token presented to it by that token's"
        " hash (WHERE only; its role is granted this one column for it, migration 0017)",
    ("Sources/IdentityGateway/Routes/Admin/AdminImportAndKeyRoutes.swift", "password_hash"):
        "a field of the import request's JSON (checked for its type, forwarded to the token worker)",
    ("Sources/IdentityGateway/OpenAPIImportKeysDocument.swift", "password_hash"):
        "the same request field, in the OpenAPI document",
    ("Sources/IdentityKit/Messages/Generated/identity.provider.v1.swift", "nonce_hash"):
        "a field of a provider-worker message (proto/), not the auth_nonces column",
}


def column_pattern(columns):
    names = "|".join(sorted(map(re.escape, columns), key=len, reverse=True))
    return re.compile(rf"(?<![A-Za-z0-9_])({names})(?![A-Za-z0-9_])")


def closure(manifest, root):
    """Every target `root` depends on, transitively, with the chain that reaches it."""
    targets = {t["name"]: t for t in manifest["targets"]}
    seen = {root: [root]}
    todo = [root]
    while todo:
        name = todo.pop()
        for dependency in targets[name].get("dependencies", []):
            kind, value = next(iter(dependency.items()))
            # byName, target or product: [name, condition] or [name, package, ...].
            other = value[0]
            if other in targets and other not in seen:
                seen[other] = seen[name] + [other]
                todo.append(other)
    return targets, seen


def module_check(manifest):
    _, reached = closure(manifest, GATEWAY)
    if FORBIDDEN in reached:
        return [f"{GATEWAY} links {FORBIDDEN}: " + " -> ".join(reached[FORBIDDEN])]
    return []


def swift_files(manifest, names):
    targets = {t["name"]: t for t in manifest["targets"]}
    for name in sorted(names):
        target = targets[name]
        if target.get("type") == "system":
            continue
        folder = ROOT / (target.get("path") or f"Sources/{name}")
        yield from sorted(folder.rglob("*.swift"))


def named_columns(path, text, pattern, allowed):
    relative = str(path.relative_to(ROOT)) if path.is_absolute() else str(path)
    found = []
    for number, line in enumerate(text.splitlines(), 1):
        if line.lstrip().startswith("//"):
            continue
        for match in pattern.finditer(line):
            if (relative, match.group(1)) not in allowed:
                found.append(f"{relative}:{number}: names {match.group(1)} "
                             f"({SECRET_COLUMNS[match.group(1)]}): {line.strip()[:120]}")
    return found


def main():
    manifest = json.loads(subprocess.run(["swift", "package", "dump-package"], cwd=ROOT, check=True,
                                         capture_output=True, text=True).stdout)
    failures = module_check(manifest)

    # A copy where the gateway's module depends on IdentityCredentials must be refused.
    broken = json.loads(json.dumps(manifest))
    for target in broken["targets"]:
        if target["name"] == "IdentityGateway":
            target["dependencies"].append({"byName": [FORBIDDEN, None]})
    if not module_check(broken):
        failures.append("self-test: a gateway that depends on IdentityCredentials was not refused")

    _, reached = closure(manifest, GATEWAY)
    pattern = column_pattern(SECRET_COLUMNS)
    files = list(swift_files(manifest, reached))
    for path in files:
        failures += named_columns(path, path.read_text(encoding="utf-8"), pattern, ALLOWED)
    # A query that reads a secret column must be refused (and a comment that names one must not).
    probe = 'try connection.query("SELECT uid, password_hash FROM users WHERE app_id = $1", [appId])\n' \
            '// password_hash stays in the token worker\n'
    if len(named_columns(pathlib.Path("probe.swift"), probe, pattern, ALLOWED)) != 1:
        failures.append("self-test: a query naming password_hash was not refused exactly once")

    everything = "\n".join(p.read_text(encoding="utf-8") for p in (ROOT / "Sources").rglob("*.swift"))
    for column in sorted(SECRET_COLUMNS):
        if not column_pattern([column]).search(everything):
            failures.append(f"{column}: listed as a secret column but named nowhere in Sources/ (misspelt?)")
    for path, column in sorted(ALLOWED):
        if not (ROOT / path).exists():
            failures.append(f"{path}: allowed to name {column} but no such file (moved? update ALLOWED)")

    if failures:
        for failure in failures:
            print(f"FAIL {failure}", file=sys.stderr)
        print(f"gateway secrets check: {len(failures)} failed", file=sys.stderr)
        return 1
    print(f"gateway secrets check: {GATEWAY} links {', '.join(sorted(reached))}; "
          f"no {FORBIDDEN}, and none of {len(SECRET_COLUMNS)} secret columns named in its "
          f"{len(files)} Swift files (but {len(ALLOWED)} allowed places)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
