#!/usr/bin/env python3
"""Generate Swift from the .proto files under proto/: the message types, and the operations.

    python3 tools/protogen.py          write the generated files
    python3 tools/protogen.py --check  write nothing; exit 1 with a diff if those files drift

proto/ is read the way protoc reads it (`protoc --descriptor_set_out`, Debian's
protobuf-compiler, parsed with the `protobuf` package), never with regular expressions. Out:
- Sources/IdentityKit/Messages/Generated/*.swift: every message, speaking the proto3 JSON
  mapping, which is how every message travels on the bus. Only the proto3 subset this service
  uses is understood (top-level messages with scalar, optional, repeated and message fields);
  anything else stops with an error, so nothing is silently dropped.
- Sources/IdentityTokenWorker/Generated/TokenCommands.swift: from the rpcs of
  proto/identity/gateway/v1/gateway.proto and the fields their commands mark with a `source`,
  the token worker's handler protocol, dispatch table and each command's caller checks.
- Sources/IdentityGateway/Generated/Operations.swift: each HTTP operation as declared (path,
  access, limits, errors, status) and, per service, the handlers protocol whose conformer
  gets the service's routes.
- Sources/OperationAPI/Generated/OperationAPI.swift: the typed operation API, one method per HTTP
  operation with its input as the route reads it, for the doors that call in-process.
- Sources/IdentityClient/Generated/APIRequests.swift and clients/typescript/src/generated/requests.ts:
  the SDKs' request layers, one request builder per operation an app's client calls.
The emitters are ours; options are in proto/identity/options/v1/options.proto.
"""
import argparse, difflib, sys
from pathlib import Path

# The reading and the emitters are the package tools/declared/, found next to this file.
from declared.calls import render_operation_api
from declared.sdks import render_swift_requests, render_ts_requests
from declared.descriptors import MARKER, PROTO_DIR, ProtoError, parse_all, resolve
from declared.gateway import render_gateway
from declared.messages import render_file
from declared.operations import field_sources, operations
from declared.shapes import is_shape
from declared.workers import WORKERS, render_token_worker, render_worker

ROOT = Path(__file__).resolve().parent.parent
OUT_DIR = ROOT / "Sources" / "IdentityKit" / "Messages" / "Generated"
GATEWAY_OUT = ROOT / "Sources" / "IdentityGateway" / "Generated"
API_OUT = ROOT / "Sources" / "OperationAPI" / "Generated"
SWIFT_SDK_OUT = ROOT / "Sources" / "IdentityClient" / "Generated"
TS_SDK_OUT = ROOT / "clients" / "typescript" / "src" / "generated"
TOKEN_OUT = ROOT / "Sources" / "IdentityTokenWorker" / "Generated"
WORKER_OUT = {w: ROOT / "Sources" / f"Identity{w.capitalize()}Worker" / "Generated"
              for w in ("revocation", "provider", "mailer")}


def generate(proto_dir=PROTO_DIR):
    """Every expected output file (path relative to the repository) -> its content, from proto/
    or another tree of .proto files (tools/tests/ renders its fixture with this)."""
    files, options = parse_all(proto_dir)
    resolve(files)
    outputs, packages = {}, set()
    rel = OUT_DIR.relative_to(ROOT).as_posix()
    # A file with a `shape` holds answers' shapes only: the document's, rendered by the gateway.
    shape_files = [pf for pf in files if any(is_shape(m, options) for m in pf.messages)]
    shapes = [m for pf in shape_files for m in pf.messages]
    for pf in files:
        if pf in shape_files:
            continue
        name = Path(pf.path).stem
        out_name = f"{pf.package}.swift" if pf.package not in packages else f"{pf.package}.{name}.swift"
        outputs[f"{rel}/{out_name}"] = render_file(pf, pf.package not in packages, options)
        packages.add(pf.package)
    ops = operations(files, options)
    outputs[f"{TOKEN_OUT.relative_to(ROOT).as_posix()}/TokenCommands.swift"] = render_token_worker(ops, field_sources(files, options))
    for worker, (prefix, *_rest) in WORKERS.items():
        outputs[f"{WORKER_OUT[worker].relative_to(ROOT).as_posix()}/{prefix}Commands.swift"] = render_worker(
            ops, field_sources(files, options), worker)
    messages = {f"{pf.package}.{m.name}": m for pf in files for m in pf.messages}
    outputs[f"{GATEWAY_OUT.relative_to(ROOT).as_posix()}/Operations.swift"] = render_gateway(
        ops, messages, options, field_sources(files, options), shapes)
    outputs[f"{API_OUT.relative_to(ROOT).as_posix()}/OperationAPI.swift"] = render_operation_api(ops, messages, options)
    outputs[f"{SWIFT_SDK_OUT.relative_to(ROOT).as_posix()}/APIRequests.swift"] = render_swift_requests(ops, messages, options)
    outputs[f"{TS_SDK_OUT.relative_to(ROOT).as_posix()}/requests.ts"] = render_ts_requests(ops, messages, options)
    return outputs


def existing_generated():
    """Files in the output folders that this tool wrote (hand-written files there are left alone)."""
    found = {}
    for folder in (OUT_DIR, TOKEN_OUT, GATEWAY_OUT, API_OUT, SWIFT_SDK_OUT, TS_SDK_OUT, *WORKER_OUT.values()):
        for p in sorted([*folder.glob("*.swift"), *folder.glob("*.ts")]) if folder.is_dir() else []:
            text = p.read_text(encoding="utf-8")
            if text.startswith(MARKER):
                found[p.relative_to(ROOT).as_posix()] = text
    return found


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 if the Swift drifted")
    args = parser.parse_args()
    try:
        expected = generate()
    except ProtoError as error:
        sys.exit(f"protogen: {error}")
    on_disk = existing_generated()
    for name in expected:  # an edited file may have lost its marker; compare it regardless
        if name not in on_disk and (ROOT / name).is_file():
            on_disk[name] = (ROOT / name).read_text(encoding="utf-8")
    if args.check:
        diff = []
        for name in sorted(set(expected) | set(on_disk)):
            old, new = on_disk.get(name), expected.get(name)
            if old != new:
                diff += difflib.unified_diff((old or "").splitlines(True), (new or "").splitlines(True),
                                             name if old is not None else "/dev/null",
                                             f"{name} (from proto/)" if new is not None else "/dev/null")
        if diff:
            sys.stdout.writelines(diff)
            sys.exit("protogen: generated Swift is out of date with proto/; run `python3 tools/protogen.py`")
        print("protogen: generated Swift matches proto/")
        return
    for name in set(on_disk) - set(expected):
        (ROOT / name).unlink()
        print(f"protogen: removed stale {name}")
    for name, text in expected.items():
        if on_disk.get(name) != text:
            (ROOT / name).parent.mkdir(parents=True, exist_ok=True)
            (ROOT / name).write_text(text, encoding="utf-8", newline="\n")
            print(f"protogen: wrote {name}")


if __name__ == "__main__":
    main()
