#!/usr/bin/env python3
"""Keeps each door that calls operations in-process behind the typed operation API (make test
runs it, in about a second).

A door (`DOORS`) reaches the service only through `OperationAPI`: it cannot build a command,
read the store, write an audit row or name a route, so what an operation checks is the
operation's own. Checked, for each door target:

1. its dependencies in Package.swift (`swift package dump-package`) are only those allowed;
2. every Swift file of it imports only allowed modules;
3. no Swift file of it names an API path in a string literal (a door calls a method, never a
   path: the declaration owns the path).

The SDKs are doors over HTTP: their requests are generated (APIRequests.swift, requests.ts), so
their hand-written files (session keeping, answers) name no path of a declared operation
either. The one exception is the session-object profile's own edge routes (`EDGE_PATHS`), which
the TypeScript client's cookie transport calls and no declaration holds.

Each check is also run once on a deliberately broken input, which it must refuse: a check that
passes everything is not a check.
"""
import json
import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
# door target -> the modules it may depend on and import
DOORS = {"IdentityGraphQL": {"GraphQL", "OperationAPI", "IdentityBasics"}}
ALWAYS_IMPORTABLE = {"Foundation", "FoundationEssentials", "Glibc", "Darwin"}
PATH_LITERAL = re.compile(r'["`](/v1/|/\.well-known/|/api/)[^"`]*')
# The SDKs' hand-written sources (their generated request layers are left out).
SDK_SOURCES = [("Sources/IdentityClient", "*.swift"), ("clients/typescript/src", "*.ts")]
# docs/client-profiles.md, "session-object": routes of the profile's edge, not declared operations.
EDGE_PATHS = {"/v1/auth/login", "/v1/auth/apple/nonce", "/v1/auth/apple/token"}
IMPORT = re.compile(r"^\s*(?:@\w+(?:\([^)]*\))?\s+)*import\s+(?:(?:struct|class|enum|protocol|func|var|let|typealias)\s+)?([A-Za-z_][A-Za-z0-9_]*)", re.M)


def strip_comments(text):
    return re.sub(r"//[^\n]*", "", re.sub(r"/\*.*?\*/", "", text, flags=re.S))


def file_problems(name, text, allowed):
    problems = []
    code = strip_comments(text)
    for module in IMPORT.findall(code):
        if module not in allowed | ALWAYS_IMPORTABLE:
            problems.append(f"{name}: imports {module} (a door imports only {sorted(allowed)})")
    problems += path_problems(name, code)
    return problems


def path_problems(name, code, allowed=frozenset()):
    problems = []
    for match in PATH_LITERAL.finditer(code):
        if match.group(0)[1:] in allowed:
            continue
        line = code[:match.start()].count("\n") + 1
        problems.append(f"{name}:{line}: names an API path; use the operation's generated call instead")
    return problems


def sdk_problems(root):
    problems = []
    for folder, pattern in SDK_SOURCES:
        files = [p for p in sorted((root / folder).rglob(pattern)) if "Generated" not in p.parts and "generated" not in p.parts]
        if not files:
            problems.append(f"{folder}: no sources")
        for path in files:
            problems += path_problems(path.relative_to(root).as_posix(), strip_comments(path.read_text(encoding="utf-8")), EDGE_PATHS)
    return problems


def dependency_problems(target, dependencies, allowed):
    return [f"Package.swift: {target} depends on {d} (a door depends only on {sorted(allowed)})"
            for d in sorted(set(dependencies) - allowed)]


def target_dependencies(package):
    out = {}
    for target in package["targets"]:
        names = []
        for dep in target.get("dependencies", []):
            for kind in ("byName", "target", "product"):
                if kind in dep:
                    names.append(dep[kind][0])
        out[target["name"]] = names
    return out


def self_test():
    """The checks refuse what they are for."""
    allowed = DOORS["IdentityGraphQL"]
    assert file_problems("x.swift", "import IdentityKit\n", allowed), "an IdentityKit import passed"
    assert file_problems("x.swift", "@testable import IdentityGateway\n", allowed), "a gateway import passed"
    assert file_problems("x.swift", 'let p = "/v1/me"\n', allowed), "a path literal passed"
    assert not file_problems("x.swift", 'import OperationAPI\n// see "/v1/me"\n', allowed), "a comment was refused"
    assert dependency_problems("IdentityGraphQL", ["GraphQL", "IdentityKit"], allowed), "an IdentityKit dependency passed"
    assert path_problems("x.ts", "this.send('GET', `/v1/me/passkeys/${id}`)"), "a template path passed"
    assert not path_problems("x.ts", 'this.send("POST", "/v1/auth/login")', EDGE_PATHS), "an edge route was refused"


def main():
    self_test()
    dumped = subprocess.run(["swift", "package", "dump-package"], cwd=ROOT, check=True, capture_output=True, text=True)
    dependencies = target_dependencies(json.loads(dumped.stdout))
    problems = []
    for target, allowed in DOORS.items():
        if target not in dependencies:
            problems.append(f"Package.swift: no target {target}")
            continue
        problems += dependency_problems(target, dependencies[target], allowed)
        files = sorted((ROOT / "Sources" / target).rglob("*.swift"))
        if not files:
            problems.append(f"Sources/{target}: no Swift files")
        for path in files:
            problems += file_problems(path.relative_to(ROOT).as_posix(), path.read_text(encoding="utf-8"), allowed)
    problems += sdk_problems(ROOT)
    if problems:
        print("\n".join(problems))
        sys.exit("door-seams: a door reaches past the operation API")
    print(f"door-seams: {', '.join(DOORS)} reach the service through OperationAPI only; the SDKs' hand-written "
          "files name no declared operation's path")


if __name__ == "__main__":
    main()
