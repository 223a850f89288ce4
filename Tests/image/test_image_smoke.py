"""The image runs the service: every process starts from it (read-only root, non-root, no
capabilities) and answers /readyz and /metrics; a user signs up, signs in, refreshes, reads /me,
and signs in with a code the mailer worker delivered. Every secret reaches a container as a mounted
file: none is in its environment, and a process given one both ways refuses to start."""

import json

import ops_metrics
from conftest import PROCESSES, podman
from stack_smoke import sign_up_sign_in_refresh_me_and_an_email_code


def test_every_library_resolves_inside_the_image(image_stack):
    done = podman("run", "--rm", "--network", "none", "--entrypoint", "/bin/sh", image_stack.image,
                  "-c", 'for f in /usr/local/bin/*; do echo "$f"; ldd "$f"; done')
    assert "identity-gateway" in done.stdout, done.stdout
    assert "not found" not in done.stdout, done.stdout


def test_every_process_is_ready_and_serves_metrics(image_stack):
    for name in PROCESSES:
        status, _, body = ops_metrics.fetch(image_stack.metrics_url(name, "/readyz"))
        assert status == 200, (name, body)
        families = ops_metrics.scrape(image_stack.metrics_url(name))
        assert families, name


def test_secrets_reach_every_container_as_files_only(image_stack):
    stack = image_stack
    for name in PROCESSES:
        env = json.loads(podman("inspect", "-f", "{{json .Config.Env}}", stack.containers[name]).stdout)
        names = {entry.split("=", 1)[0] for entry in env}
        assert {"IDENTITY_DATABASE_URL_FILE", "IDENTITY_AMQP_URL_FILE"} <= names, (name, sorted(names))
        leaked = [entry.split("=", 1)[0] for entry in env if any(secret in entry for secret in stack.secrets)]
        assert not leaked, (name, leaked)


def test_a_secret_given_both_as_a_variable_and_as_a_file_stops_a_process_at_start(image_stack):
    stack = image_stack
    env = stack.env_for("identity-token-worker", IDENTITY_METRICS_PORT="0")
    done = podman("run", "--rm", *stack.run_args(env), "--env", f"IDENTITY_AMQP_URL={env['IDENTITY_AMQP_URL']}",
                  stack.image, "/usr/local/bin/identity-token-worker", check=False, timeout=60)
    assert done.returncode == 2, (done.returncode, done.stderr)
    assert "IDENTITY_AMQP_URL and IDENTITY_AMQP_URL_FILE are both set" in done.stderr, done.stderr


def test_processes_run_unprivileged_on_a_read_only_root(image_stack):
    for name in PROCESSES:
        done = podman("inspect", "-f", "{{.Config.User}} {{.HostConfig.ReadonlyRootfs}}",
                      image_stack.containers[name])
        assert done.stdout.split() == ["10001:10001", "true"], (name, done.stdout)


def test_sign_up_sign_in_refresh_me_and_an_email_code(image_stack):
    stack = image_stack
    sign_up_sign_in_refresh_me_and_an_email_code(stack.client, stack.ctl, stack.mail, "image")

    dead = [name for name in PROCESSES if not stack.running(name)]
    assert not dead, f"exited: {dead}\n{stack.logs()}"


def test_a_made_up_master_key_stops_a_worker_at_start(image_stack):
    stack = image_stack
    env = stack.env_for("identity-token-worker", IDENTITY_MASTER_KEY="00" * 32,
                        IDENTITY_METRICS_PORT="0")
    done = podman("run", "--rm", *stack.run_args(env, key=False), stack.image,
                  "/usr/local/bin/identity-token-worker", check=False, timeout=60)
    assert done.returncode == 2, (done.returncode, done.stderr)
    assert "IDENTITY_MASTER_KEY is not a random key (every byte is 00)" in done.stderr, done.stderr
