"""The image runs the service: every process starts from it (read-only root, non-root, no
capabilities) and answers /readyz and /metrics; a user signs up, signs in, refreshes, reads /me,
and signs in with a code the mailer worker delivered."""

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
