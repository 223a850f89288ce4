"""The README's five-minute quickstart, run as written against the real stack, so the README
cannot drift from the service: the shell block between its quickstart markers is run in bash,
in order, with only what differs between `make run` and this stack substituted (the gateway's
URL, `. .run/env`, the path of identityctl), and each step's answer is checked."""

import json
import re
import subprocess
from pathlib import Path

README = Path(__file__).resolve().parents[2] / "README.md"
BEGIN, END = "<!-- quickstart:begin -->", "<!-- quickstart:end -->"


def quickstart_block():
    text = README.read_text()
    assert text.count(BEGIN) == 1 and text.count(END) == 1, "README.md: one quickstart between its markers"
    block = text.split(BEGIN, 1)[1].split(END, 1)[0].strip()
    match = re.fullmatch(r"```sh\n(.*)\n```", block, re.S)
    assert match, "README.md: the quickstart is one ```sh block"
    return match.group(1)


def substituted(script, base_url, identityctl):
    """The README's script with this stack's URL and identityctl; each replaced text must be
    there, so a README that changes them fails here rather than running something else."""
    for written, replacement in [
        ("BASE=http://127.0.0.1:8080\n", f"BASE={base_url}\n"),
        (". .run/env", ":"),
        (".build/release/identityctl", identityctl),
    ]:
        assert written in script, f"README.md's quickstart no longer has {written!r}"
        script = script.replace(written, replacement)
    return script


def outputs(stdout):
    """Each line the script printed: a JSON object decoded, anything else (a status) as text."""
    return [json.loads(line) if line.startswith("{") else line.strip() for line in stdout.splitlines()]


def test_the_readme_quickstart_runs_against_the_service(stack, base_url):
    script = substituted(quickstart_block(), base_url.rstrip("/"), stack.binary("identityctl"))
    done = subprocess.run(["bash", "-euo", "pipefail", "-c", script], env=stack.env_for("identityctl"),
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, f"the quickstart failed:\n{script}\n--- stdout\n{done.stdout}\n--- stderr\n{done.stderr}"
    printed = outputs(done.stdout)
    assert len(printed) == 4, printed

    signed_up, me, sign_out_status, after_sign_out = printed
    assert signed_up["data"]["user"]["email"] == "jane@example.com", signed_up
    assert signed_up["data"]["is_new_user"] is True
    assert signed_up["data"]["refresh_token"].startswith("rt_")
    # /me answers with the refreshed token: the same user, seen by the gateway.
    assert me["data"]["uid"] == signed_up["data"]["user"]["uid"], me
    assert me["data"]["email"] == "jane@example.com"
    assert sign_out_status == "204"
    assert after_sign_out["status"] == 401 and after_sign_out["code"] == "auth/invalid-token", after_sign_out


def test_the_quickstart_covers_every_step_the_readme_promises():
    script = quickstart_block()
    for step in ["identityctl apps create", "/v1/auth/sign-up", "/v1/auth/sign-in", "/v1/auth/token/refresh",
                 "/v1/me", "/v1/auth/sign-out"]:
        assert step in script, step
    positions = [script.index(step) for step in ["apps create", "sign-up", "sign-in", "token/refresh", "/v1/me",
                                                 "sign-out"]]
    assert positions == sorted(positions), "the steps are in the order a user takes them"
