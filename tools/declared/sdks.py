"""The SDKs' request layers, from the same declarations as the server: for every operation an
app's client calls (access APP_KEY, GUEST, BEARER_OPTIONAL or BEARER…), the request it sends:
method, path with its parameters escaped as one segment each, the body from typed arguments
(absent optionals left out), and whether it goes with the signed-in user's token.

- Sources/IdentityClient/Generated/APIRequests.swift: `APIRequest`, one static function per
  operation (Foundation only, like the SDK).
- clients/typescript/src/generated/requests.ts: one function per operation.

Session keeping (storage, refresh, state streams) and what an answer becomes stay hand-written
in each SDK; those files name no path (scripts/check-door-seams.py).
"""
import re

from .calls import input_fields, path_parameters
from .descriptors import json_name
from .operations import GENERATED_HEADER, lower_camel, swift_string

CLIENT_ACCESS = {"APP_KEY", "GUEST", "BEARER_OPTIONAL", "BEARER", "BEARER_FRESH", "BEARER_FRESH_OR_PASSWORD",
                 "BEARER_OWN_PROOF"}
SIGNED_IN = {"BEARER", "BEARER_FRESH", "BEARER_FRESH_OR_PASSWORD", "BEARER_OWN_PROOF"}
TS_TYPE = {"String": "string", "Int": "number", "Bool": "boolean", "JSONValue": "unknown"}


def client_operations(ops):
    return [op for op in ops if op.path and op.access in CLIENT_ACCESS]


def _fields(op, messages, options):
    """The body's fields and whether the body is given whole (read by hand). An operation whose
    body is optional (`http.body` false) with a body message has optional fields only."""
    if not op.body and f"identity.gateway.v1.{op.request}" not in messages:
        return [], False
    fields = input_fields(op, messages, options)
    if fields is None:
        return [], True  # a body read by hand: the caller gives it whole
    return fields, False


def render_swift_requests(ops, messages, options):
    i1, i2 = " " * 4, " " * 8
    out = [GENERATED_HEADER, "", "import Foundation", "",
           "/// A request of the service's API as gateway.proto declares it: the client's methods send these",
           "/// (`IdentityClient.send`), adding the signed-in user's token where `signedIn` says so.",
           "struct APIRequest: Sendable {",
           f"{i1}let method: String", f"{i1}let path: String", f"{i1}let body: JSONObject?",
           f"{i1}/// The operation acts for the signed-in user (a BEARER access): sent with their access token.",
           f"{i1}let signedIn: Bool", "",
           f"{i1}/// A path parameter as one segment: nothing in it can reach another path.",
           f"{i1}static func segment(_ value: String) -> String {{",
           f'{i2}value.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(CharacterSet(charactersIn: "-_.~"))) ?? ""',
           f"{i1}}}"]
    for op in client_operations(ops):
        fields, whole = _fields(op, messages, options)
        params = [f"{json_name(p)}: String" for p in path_parameters(op)]
        params += [f"{prop.strip('`')}: {kind}{'' if required else '? = nil'}" for _, prop, kind, required in fields]
        if whole:
            params.append("body: JSONObject")
        path = swift_string(op.path)
        for p in path_parameters(op):
            path = path.replace("{" + p + "}", f'" + segment({json_name(p)}) + "')
        path = path.replace(' + ""', "")
        out += ["", f"{i1}/// {op.method} {op.path}: {op.summary.rstrip('.')}.",
                f"{i1}static func {lower_camel(op.name)}({', '.join(params)}) -> APIRequest {{"]
        if fields:
            out.append(f"{i2}var body: JSONObject = [:]")
            for key, prop, kind, required in fields:
                bare = prop.strip("`")
                value = {"String": f".string({bare})", "Bool": f".bool({bare})", "Int": f".number(Double({bare}))",
                         "JSONValue": bare}[kind]
                if required:
                    out.append(f"{i2}body[{swift_string(key)}] = {value}")
                else:
                    out.append(f"{i2}if let {bare} {{ body[{swift_string(key)}] = {value} }}")
            body = "body"
        elif whole:
            body = "body"
        else:
            body = "[:]" if op.body else "nil"
        out.append(f"{i2}return APIRequest(method: {swift_string(op.method)}, path: {path}, body: {body}, "
                   f"signedIn: {'true' if op.access in SIGNED_IN else 'false'})")
        out.append(f"{i1}}}")
    out.append("}")
    return "\n".join(out) + "\n"


def render_ts_requests(ops, messages, options):
    out = [GENERATED_HEADER, "",
           "/** A request of the service's API as gateway.proto declares it; the client sends it, adding the",
           " * signed-in user's token where `signedIn` says so. */",
           "export interface APIRequest {", "  method: string;", "  path: string;", "  body?: Record<string, unknown>;",
           "  /** The operation acts for the signed-in user (a BEARER access). */", "  signedIn: boolean;", "}", "",
           "/** A path parameter as one segment: nothing in it can reach another path. */",
           "function segment(value: string): string {", "  return encodeURIComponent(value);", "}"]
    for op in client_operations(ops):
        fields, whole = _fields(op, messages, options)
        args = [f"{lower_camel(json_name(p))}: string" for p in path_parameters(op)]
        if fields:
            # An optional field left undefined is not sent; null is sent (it clears, where the
            # field clears with null).
            members = "; ".join(f"{prop.strip('`')}{'' if required else '?'}: {TS_TYPE[kind]}{'' if required else ' | null'}"
                                for _, prop, kind, required in fields)
            optional = "" if any(required for *_, required in fields) else " = {}"
            args.append(f"input: {{ {members} }}{optional}")
        if whole:
            args.append("body: Record<string, unknown>")
        path = "`" + re.sub(r"\{([a-z_]+)\}", lambda m: "${segment(" + json_name(m[1]) + ")}", op.path) + "`"
        if "${" not in path:
            path = swift_string(op.path)
        out += ["", f"/** {op.method} {op.path}: {op.summary.rstrip('.')}. */",
                f"export function {lower_camel(op.name)}({', '.join(args)}): APIRequest {{"]
        if fields:
            out.append("  const body: Record<string, unknown> = {};")
            for key, prop, kind, required in fields:
                bare = prop.strip("`")
                if required:
                    out.append(f"  body[{swift_string(key)}] = input.{bare};")
                else:
                    out.append(f"  if (input.{bare} !== undefined) body[{swift_string(key)}] = input.{bare};")
            body = ", body"
        elif whole:
            body = ", body"
        else:
            body = ", body: {}" if op.body else ""
        out.append(f"  return {{ method: {swift_string(op.method)}, path: {path}{body}, "
                   f"signedIn: {'true' if op.access in SIGNED_IN else 'false'} }};")
        out.append("}")
    return "\n".join(out) + "\n"
