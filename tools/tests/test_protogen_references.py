"""Reference tests of tools/protogen.py: the generator run on a fixture, its output compared with
reference files, as swift-openapi-generator tests its own generator with reference sources.

The fixture (tools/tests/fixtures/proto/) is a small tree of .proto files that imports the
repository's own options.proto: a message with each field kind the generator supports (every
scalar, optional, repeated, message fields of this file, of the package's other file and of
another package, no fields, declared bounds, names protoc camel-cases), and a gateway.proto with
an rpc for each access of options.proto, bodies with rules, path parameters, fixed fields, a body
declared as its own message, commands routed to the token, revocation and provider workers, and
answers' shapes. `protogen.generate(FIXTURE)` renders it exactly as `make proto` renders proto/;
each file it writes is compared with tools/tests/references/<its file name>, and the JSON Schemas
the generator embeds in Operations.swift (request bodies, answers' shapes and responses) with
tools/tests/references/schemas.json, pretty-printed so a change to them reads as one. A mismatch
fails with a unified diff (reference -> generated).

    python3 -m pytest -q tools/tests                    run (make generator-test)
    UPDATE_REFERENCES=1 python3 -m pytest -q tools/tests/test_protogen_references.py
                                                        rewrite the references from the generator
                                                        (then read `git diff tools/tests/references`)
"""
import difflib
import json
import os
import sys
import unittest
from pathlib import Path

TESTS = Path(__file__).resolve().parent
sys.path.insert(0, str(TESTS.parent))  # tools/: protogen and the package declared/

import protogen  # noqa: E402
from declared.bodies import body_schema  # noqa: E402
from declared.descriptors import SCALARS, parse_all, resolve  # noqa: E402
from declared.operations import operations  # noqa: E402
from declared.shapes import is_shape, shape_components  # noqa: E402

FIXTURE = TESTS / "fixtures" / "proto"
REFERENCES = TESTS / "references"
UPDATE = os.environ.get("UPDATE_REFERENCES") == "1"

# Where generate() puts each file it renders from the fixture: the folders `make proto` writes.
EXPECTED_OUTPUTS = {
    "Sources/IdentityGateway/Generated": ["Operations.swift"],
    "Sources/IdentityKit/Messages/Generated": [
        "identity.admin.v1.swift", "identity.common.v1.swift", "identity.fixture.v1.second.swift",
        "identity.fixture.v1.swift", "identity.gateway.v1.swift", "identity.provider.v1.swift",
        "identity.revocation.v1.swift", "identity.token.v1.swift"],
    "Sources/IdentityMailerWorker/Generated": ["MailerCommands.swift"],
    "Sources/IdentityProviderWorker/Generated": ["ProviderCommands.swift"],
    "Sources/IdentityRevocationWorker/Generated": ["RevocationCommands.swift"],
    "Sources/IdentityTokenWorker/Generated": ["TokenCommands.swift"],
    "Sources/OperationAPI/Generated": ["OperationAPI.swift"],
    "Sources/IdentityClient/Generated": ["APIRequests.swift"],
    "clients/typescript/src/generated": ["requests.ts"],
}


def parsed():
    files, options = parse_all(FIXTURE)
    resolve(files)
    return files, options


def schema_fragments():
    """The JSON Schemas the generator embeds in Operations.swift, from the same functions: each
    request body it generates or reads (by its route), and the answers' shapes and responses."""
    files, options = parsed()
    messages = {f"{pf.package}.{m.name}": m for pf in files for m in pf.messages}
    shapes = [m for pf in files if any(is_shape(m, options) for m in pf.messages) for m in pf.messages]
    bodies = {}
    for op in operations(files, options):
        body = messages.get(f"identity.gateway.v1.{op.request}")
        if body is not None:
            bodies[f"{op.method} {op.path}"] = {"request": op.request, "schema": body_schema(body, options)}
        elif op.answer and op.body:
            schema = body_schema(messages[op.input], options, {**op.fixed, **op.path_fields})
            bodies[f"{op.method} {op.path}"] = {"request": op.request or None, "schema": schema}
    schemas, responses = shape_components(shapes, options)
    document = {"requestBodies": bodies, "schemas": schemas, "responses": responses}
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


def rendered():
    """Reference file name -> the text the generator renders for it."""
    out = {}
    for path, text in protogen.generate(FIXTURE).items():
        name = Path(path).name
        assert name not in out, f"two outputs named {name}"
        out[name] = text
    out["schemas.json"] = schema_fragments()
    return out


def diff(name, old, new):
    return "".join(difflib.unified_diff(
        (old or "").splitlines(True), (new or "").splitlines(True),
        f"tools/tests/references/{name}" if old is not None else "/dev/null",
        f"{name} (generated from tools/tests/fixtures/proto)" if new is not None else "/dev/null"))


class ReferenceTests(unittest.TestCase):
    maxDiff = None

    def test_generated_files_match_references(self):
        expected = rendered()
        on_disk = {p.name: p.read_text(encoding="utf-8") for p in sorted(REFERENCES.glob("*")) if p.is_file()}
        if UPDATE:
            REFERENCES.mkdir(exist_ok=True)
            for name in set(on_disk) - set(expected):
                (REFERENCES / name).unlink()
            for name, text in expected.items():
                if on_disk.get(name) != text:
                    (REFERENCES / name).write_text(text, encoding="utf-8", newline="\n")
                    print(f"updated tools/tests/references/{name}", file=sys.stderr)
            return
        changed = sorted(n for n in set(expected) | set(on_disk) if expected.get(n) != on_disk.get(n))
        if changed:
            self.fail(f"generated output differs from tools/tests/references/ in {', '.join(changed)}"
                      " (UPDATE_REFERENCES=1 rewrites them):\n"
                      + "".join(diff(n, on_disk.get(n), expected.get(n)) for n in changed))

    def test_outputs_go_where_make_proto_writes_them(self):
        expected = sorted(f"{folder}/{name}" for folder, names in EXPECTED_OUTPUTS.items() for name in names)
        self.assertEqual(sorted(protogen.generate(FIXTURE)), expected)

    def test_every_generated_file_starts_with_the_marker(self):
        # existing_generated() finds (and removes stale) generated files by this first line.
        for path, text in protogen.generate(FIXTURE).items():
            self.assertTrue(text.startswith(protogen.MARKER), path)


class FixtureCoverageTests(unittest.TestCase):
    """The fixture keeps covering what the generator supports, as options.proto and the
    generator's tables grow: a new access, scalar or label fails here until the fixture has it."""

    @classmethod
    def setUpClass(cls):
        cls.files, cls.options = parsed()
        cls.ops = operations(cls.files, cls.options)

    def test_an_rpc_for_every_access(self):
        declared = {v.name for v in self.options.Access.DESCRIPTOR.values} - {"ACCESS_UNSPECIFIED"}
        self.assertEqual({op.access for op in self.ops}, declared)

    def test_a_field_of_every_scalar_and_label(self):
        fields = [f for pf in self.files for m in pf.messages for f in m.fields]
        self.assertEqual({f.type for f in fields if f.kind != "message"}, set(SCALARS))
        for label in ("", "optional", "repeated"):
            for kind in ("plain", "message"):
                self.assertTrue(any(f.label == label and (f.kind == "message") == (kind == "message") for f in fields),
                                f"no {label or 'implicit'} {kind} field in the fixture")

    def test_every_field_source_is_filled_somewhere(self):
        declared = {v.name for v in self.options.Source.DESCRIPTOR.values} - {"SOURCE_UNSPECIFIED", "APP"}
        used = {self.options.Source.Name(f.options.Extensions[self.options.field].source)
                for pf in self.files for m in pf.messages for f in m.fields}
        self.assertLessEqual(declared, used)

    def test_path_parameters_fixed_fields_and_body_messages(self):
        self.assertTrue(any(op.path_fields for op in self.ops))
        self.assertTrue(any(op.fixed for op in self.ops))
        self.assertTrue(any(op.request and not op.answer and op.body for op in self.ops))
        workers = {op.input.split(".")[1] for op in self.ops}
        self.assertLessEqual({"token", "admin", "revocation", "provider"}, workers)


if __name__ == "__main__":
    unittest.main()
