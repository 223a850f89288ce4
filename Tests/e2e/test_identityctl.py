"""identityctl takes only what each command declares (CommandLineRules): a mistyped or unknown
flag, a flag without its value or an extra argument is refused with exit 2, naming the nearest
flag, and changes nothing; `--help` exits 0 on every command; `apps list` lists the apps."""

import json

import pytest

import db_tools

COMMANDS = [("migrate",), ("apps", "create"), ("apps", "list"), ("apps", "settings", "APP"),
            ("apps", "rotate-secret-key", "APP"), ("keys", "rotate", "APP"), ("keys", "list", "APP"),
            ("users", "import", "APP", "FILE"), ("mail", "replay-dead"), ("bench", "argon2")]


def test_a_mistyped_flag_is_refused_with_the_nearest_one_and_changes_nothing(stack, app):
    before = db_tools.value(f"select access_token_ttl from apps where id = {db_tools.literal(app['app_id'])}")
    done = stack.ctl("apps", "settings", app["app_id"], "--acess-token-ttl", "600")
    assert done.returncode == 2, done
    assert "unknown flag --acess-token-ttl" in done.stderr and "did you mean --access-token-ttl?" in done.stderr, done.stderr
    assert done.stdout == ""
    assert db_tools.value(f"select access_token_ttl from apps where id = {db_tools.literal(app['app_id'])}") == before


@pytest.mark.parametrize("args, says", [
    (("apps", "settings", "APP", "--no-such-flag", "1"), "unknown flag --no-such-flag"),
    (("apps", "create", "--name"), "--name needs a value"),
    (("apps", "settings", "APP", "--rate-limit=sign_in_per_ip=5/1m"), "write --rate-limit VALUE"),
    (("keys", "list", "APP", "EXTRA"), "unexpected argument EXTRA"),
    (("users", "import", "APP", "FILE", "--allow-weak-hash"), "did you mean --allow-weak-hashes?"),
    (("aps", "list"), "did you mean apps list?"),
])
def test_what_a_command_does_not_take_is_exit_2(stack, args, says):
    done = stack.ctl(*args)
    assert done.returncode == 2, done
    assert says in done.stderr, done.stderr


@pytest.mark.parametrize("command", COMMANDS)
def test_help_exits_0_on_every_command(stack, command):
    done = stack.ctl(*command, "--help")
    assert done.returncode == 0, done
    assert "usage:" in done.stdout and "identityctl apps list" in done.stdout


def test_apps_list_lists_every_app_without_its_secret(stack, app, other_app):
    done = stack.ctl("apps", "list")
    assert done.returncode == 0, done.stderr
    listed = {entry["app_id"]: entry for entry in json.loads(done.stdout)["apps"]}
    for made in (app, other_app):
        assert listed[made["app_id"]] == {"app_id": made["app_id"], "name": made["name"], "app_key": made["app_key"],
                                          "issuer": made["issuer"], "access_token_ttl": made["access_token_ttl"]}
    assert app["secret_key"] not in done.stdout
