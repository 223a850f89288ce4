"""The typed operation API (Sources/OperationAPI/Generated/OperationAPI.swift): one method per
HTTP operation of gateway.proto, for the doors that call operations in-process (GraphQL, and
every door after it) instead of restating a path, a body or an answer.

Each method's input is what the route reads: its path parameters as arguments, its body as a
generated `…Input` struct whose stored properties are the body's fields with their Swift types
(a field the body reader checks, read by the same declaration), and for a GET the query string.
The method hands the call to an `OperationTransport`; the gateway's runs the route's whole
pipeline (app, access, fresh proof, limits, audit, the command, the reply), so a door never
decides any of it.
"""
import re

from .bodies import body_fields
from .descriptors import ProtoError, json_name, swift_ident
from .operations import GENERATED_HEADER, lower_camel, swift_string

SWIFT_OF_PROTO = {"string": "String", "int32": "Int", "bool": "Bool"}


def input_fields(op, messages, options):
    """The body fields of an operation as (json key, Swift name, Swift type, required), or None
    when its body is read by hand (the method then takes the body as JSON)."""
    body_message = messages.get(f"identity.gateway.v1.{op.request}")
    if body_message is not None:
        fields = body_fields(body_message, options)
    elif op.answer and op.body:
        fields = body_fields(messages[op.input], options, {**op.fixed, **op.path_fields})
    else:
        return None
    out = []
    for f, rules in fields:
        key = rules.body_name or f.name
        # A field read by its own reader (lists, JSON objects) and an object field are JSON.
        kind = "JSONValue" if rules.reader or rules.format == "object" else SWIFT_OF_PROTO[f.type]
        required = f.label == "" and not rules.default
        out.append((key, swift_ident(json_name(key)), kind, required))
        if rules.format == "phone":
            out.append(("country_code", "countryCode", "String", False))
    return out


def clearable_keys(op, messages, options):
    """The body keys of an operation's fields that null clears (`null_clears`), in order."""
    body_message = messages.get(f"identity.gateway.v1.{op.request}")
    if body_message is None:
        return []
    return [rules.body_name or f.name for f, rules in body_fields(body_message, options)
            if rules.null_clears]


def path_parameters(op):
    return re.findall(r"\{([a-z_]+)\}", op.path)


def input_name(op):
    return f"{op.name}Input"


def render_input(op, fields, clearable=()):
    i1, i2 = " " * 4, " " * 8
    name = input_name(op)
    lines = ["", f"/// The body of `{op.method} {op.path}` ({lower_camel(op.name)}), field by field as the route reads it.",
             f"public struct {name}: Sendable, Equatable {{"]
    for key, prop, kind, required in fields:
        lines.append(f"{i1}public var {prop}: {kind}{'' if required else '?'}")
    params = ", ".join(f"{prop.strip('`')}: {kind}{'' if required else '? = nil'}" for _, prop, kind, required in fields)
    if clearable:
        lines += [f"{i1}/// Fields sent as null: each clears what is stored (the route's `null_clears`).",
                  f"{i1}public var clearing: Set<Clearable>", "",
                  f"{i1}public enum Clearable: String, Sendable, CaseIterable {{"]
        lines += [f"{i2}case {swift_ident(json_name(key))} = {swift_string(key)}" for key in clearable]
        lines += [f"{i1}}}"]
        params += ", clearing: Set<Clearable> = []"
    lines += ["", f"{i1}public init({params}) {{"]
    lines += [f"{i2}self.{prop.strip('`')} = {prop.strip('`')}" for _, prop, _, _ in fields]
    if clearable:
        lines.append(f"{i2}self.clearing = clearing")
    lines += [f"{i1}}}", "", f"{i1}/// The JSON body the route reads (absent fields left out, cleared ones null).",
              f"{i1}public var body: JSONValue {{", f"{i2}var fields: [String: JSONValue] = [:]"]
    for key, prop, kind, required in fields:
        value = {"String": "string", "Bool": "bool", "Int": "number"}.get(kind)
        bare = prop.strip("`")
        wrap = (lambda v: f".{value}({'Double(' + v + ')' if kind == 'Int' else v})") if value else (lambda v: v)
        if required:
            lines.append(f"{i2}fields[{swift_string(key)}] = {wrap('self.' + bare)}")
        else:
            lines.append(f"{i2}if let {bare} {{ fields[{swift_string(key)}] = {wrap(bare)} }}")
    if clearable:
        lines.append(f"{i2}for field in clearing {{ fields[field.rawValue] = .null }}")
    lines += [f"{i2}return .object(fields)", f"{i1}}}", "}"]
    return lines


def render_operation_api(ops, messages, options):
    """The whole generated file of the OperationAPI target."""
    i1, i2 = " " * 4, " " * 8
    http = [op for op in ops if op.path]
    out = [GENERATED_HEADER, "", "import IdentityBasics", "",
           "/// Every operation reached over HTTP, by its `operationId`, in declaration order.",
           "public enum OperationName: String, Sendable, CaseIterable {"]
    out += [f"{i1}case {lower_camel(op.name)}" for op in http]
    out += ["}", "",
            "/// One method per declared operation: its input typed as the route reads it, its call run by the",
            "/// transport exactly as the route runs (access, fresh proof, limits, audit, command, reply).",
            "public struct Operations: Sendable {",
            f"{i1}public let transport: any OperationTransport", "",
            f"{i1}public init(transport: any OperationTransport) {{", f"{i2}self.transport = transport", f"{i1}}}"]
    inputs = []
    for op in http:
        params = path_parameters(op)
        # A body message makes the body's fields the input even where the body is optional
        # (account deletion's proof): every field is then optional.
        optional_body = not op.body and f"identity.gateway.v1.{op.request}" in messages
        fields = input_fields(op, messages, options) if op.body or optional_body else []
        if op.body and fields is None and op.answer:
            raise ProtoError(op.where, "an operation with a generated handler has a generated body")
        args = [f"{json_name(p)}: String" for p in params]
        if op.body and fields is None:
            args.append("body: JSONValue")
            body = "body"
        elif fields:
            # Every field optional: the input may be left out (its body is then `{}`).
            all_optional = optional_body or not any(required for *_, required in fields)
            args.append(f"_ input: {input_name(op)}" + (f" = {input_name(op)}()" if all_optional else ""))
            body = "input.body"
            inputs += render_input(op, fields, clearable_keys(op, messages, options))
        elif op.body:
            body = ".object([:])"
        else:
            body = "nil"
        if op.method == "GET":
            args.append("query: [String: String] = [:]")
        args.append("as caller: OperationCaller")
        parameters = "[" + ", ".join(f"{swift_string(p)}: {json_name(p)}" for p in params) + "]" if params else "[:]"
        summary = op.summary.rstrip(".")
        out += ["", f"{i1}/// {op.method} {op.path}: {summary}.",
                f"{i1}public func {lower_camel(op.name)}({', '.join(args)}) async throws(OperationProblem) -> OperationAnswer {{",
                f"{i2}try await transport.call(.{lower_camel(op.name)}, parameters: {parameters}, "
                f"query: {'query' if op.method == 'GET' else '[:]'}, body: {body}, as: caller)",
                f"{i1}}}"]
    out += ["}"]
    return "\n".join(out + inputs) + "\n"
