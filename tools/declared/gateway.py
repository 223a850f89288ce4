"""The gateway's Operations.swift: every HTTP operation as declared, the document's components
(request schemas, answers' shapes, field formats), and per service the handlers protocol whose
conformer gets the service's routes, with the handlers and body readers that are generated.
"""
import json, re

from .bodies import FORMATS, body_schema, render_body_message, render_generated_handler
from .descriptors import ProtoError
from .operations import (ACCESS_SWIFT, GENERATED_HEADER, camel, errors_expression, lower_camel, swift_doc,
                         swift_string, swift_type_of)
from .shapes import shape_components


def render_gateway(ops, messages=None, options=None, sources=None, shapes=None):
    """The gateway's declared operations, and per service the handlers protocol and its routes."""
    i1, i2, i3 = " " * 4, " " * 8, " " * 12
    http = [op for op in ops if op.path]
    out = [GENERATED_HEADER, "", "import IdentityKit", "", "extension DeclaredOperation {"]
    for op in http:
        limits = " + ".join(f"[RouteLimit].{re.sub(r'Ip$', 'IP', camel(l))}" for l in op.limits) or "[]"
        errors = errors_expression(op.errors, op.where)
        command = "nil" if op.input == "identity.gateway.v1.Served" else f"{swift_type_of(op.input)}.protoName"
        out += swift_doc(op.doc, i1) + [
            f"{i1}static let {lower_camel(op.name)} = DeclaredOperation(",
            f'{i2}id: "{lower_camel(op.name)}", service: "{op.service}", method: "{op.method}", pattern: "{op.path}",',
            f"{i2}access: .{ACCESS_SWIFT[op.access]}, status: {op.status}, takesBody: {'true' if op.body else 'false'},",
            f"{i2}limits: {limits}, errors: {errors},",
            f'{i2}audit: {json.dumps(op.audit) if op.audit else "nil"}, sessionCheckedByHandler: {"true" if op.session_checked_by_handler else "false"},',
            f'{i2}onlyAddsSessions: {"true" if op.only_adds_sessions else "false"}, sessionEnd: {"true" if op.session_end else "false"},',
            f"{i2}command: {command},",
            f"{i2}document: .init(summary: {swift_string(op.summary)}, description: {swift_string(op.description) if op.description else 'nil'},",
            f"{i2}                request: {swift_string(op.request) if op.request else 'nil'}, response: {swift_string(op.response) if op.response else 'nil'},",
            f"{i2}                parameters: [{', '.join(swift_string(x) for x in op.parameters)}], mfaChallenge: {'true' if op.mfa_challenge else 'false'},",
            f"{i2}                generatedRequest: {swift_string(json.dumps(body_schema(messages[op.input], options, {**op.fixed, **op.path_fields}), separators=(',', ':'))) if op.answer and op.body else 'nil'}))"]
    components, body_readers = {}, {}
    for op in http:
        body = messages.get(f"identity.gateway.v1.{op.request}")
        if body is not None:
            # A body declared as its own message: its reader is generated, its handler is not.
            if op.answer:
                raise ProtoError(op.where, f"{op.request} is a body message: the handler turns it into the command by hand")
            schema = body_schema(body, options)
            body_readers.setdefault(body.name, render_body_message(op, body, options))
        elif op.answer and op.body and op.request:
            schema = body_schema(messages[op.input], options, {**op.fixed, **op.path_fields})
        else:
            continue
        if components.setdefault(op.request, (schema, op))[0] != schema:
            raise ProtoError(op.where, f"schema {op.request} differs from {components[op.request][1].name}'s")
    out += ["", f"{i1}/// The request schemas shared by several operations (`http.request`), generated from the",
            f"{i1}/// fields of their commands: the document's components, never written by hand.",
            f"{i1}static let requestSchemas: [String: String] = ["]
    out += [f"{i2}{swift_string(name)}: {swift_string(json.dumps(schema, separators=(',', ':')))}," for name, (schema, _) in sorted(components.items())]
    out += [f"{i1}]"]
    schemas, responses = shape_components(shapes or [], options)
    for op in http:
        if op.response and op.response not in responses:
            raise ProtoError(op.where, f"response {op.response!r} is no shape's (answers.proto)")
    out += ["", f"{i1}/// The schemas of the answers' shapes (answers.proto): the document's components.",
            f"{i1}static let answerSchemas: [String: String] = ["]
    out += [f"{i2}{swift_string(name)}: {swift_string(json.dumps(s, separators=(',', ':')))}," for name, s in sorted(schemas.items())]
    out += [f"{i1}]", "", f"{i1}/// The shared responses that carry them.",
            f"{i1}static let answerResponses: [String: String] = ["]
    out += [f"{i2}{swift_string(name)}: {swift_string(json.dumps(s, separators=(',', ':')))}," for name, s in sorted(responses.items())]
    out += [f"{i1}]"]
    out += ["", f"{i1}/// What each field format adds to a body field's schema (the body readers check the same:",
            f"{i1}/// DeclaredFormatsTests holds each format's validator to its schema).",
            f"{i1}static let formatSchemas: [String: String] = ["]
    out += [f"{i2}{swift_string(name)}: {swift_string(json.dumps(s, separators=(',', ':')))}," for name, s in sorted(FORMATS.items())]
    out += [f"{i1}]"]
    services_in_order = {}
    for op in http:
        if op.service not in services_in_order and not op.service_doc:
            raise ProtoError(op.where, f"service {op.service} has no comment: it is the API document's description of its tag")
        services_in_order.setdefault(op.service, " ".join(op.service_doc))
    out += ["", f"{i1}/// Each service's comment in gateway.proto, in declaration order: the API document's tags.",
            f"{i1}static let serviceDescriptions: [(service: String, description: String)] = ["]
    out += [f"{i2}({swift_string(name)}, {swift_string(text)})," for name, text in services_in_order.items()]
    out += [f"{i1}]"]
    out += ["", f"{i1}/// Every operation reached over HTTP, in declaration order.",
            f"{i1}static let all: [DeclaredOperation] = [",
            *[f"{i2}.{lower_camel(op.name)}," for op in http], f"{i1}]", "}"]
    services = {}
    for op in http:
        services.setdefault(op.service, []).append(op)
    decoders = []
    for service, members in services.items():
        generated = [op for op in members if op.answer]
        out += ["", f"/// The routes of `{service}` (gateway.proto): the conforming type implements one handler per operation"
                    + (" (those with a declared answer are generated below)." if generated else "."),
                f"protocol {service}Handlers: Sendable {{"]
        if generated:
            out += [f"{i1}/// Sends the commands of the generated handlers.", f"{i1}var commands: CommandSender {{ get }}"]
        if any("GUEST_UID" in sources.get(op.input, {}) or op.access == "BEARER_OPTIONAL" for op in generated):
            out += [f"{i1}/// Verifies the guest token an upgrading call carries.", f"{i1}var auth: Authenticator {{ get }}"]
        for op in members:
            out += [f"{i1}/// {op.method} {op.path}",
                    f"{i1}func {lower_camel(op.name)}(_ context: RouteContext) throws -> RouteResult"]
        out += ["}", "", f"extension {service}Handlers {{", f"{i1}var routes: [Route] {{", f"{i2}["]
        out += [f"{i3}Route(.{lower_camel(op.name)}, handler: {lower_camel(op.name)})," for op in members]
        out += [f"{i2}]", f"{i1}}}"]
        for op in generated:
            decoder, handler, _ = render_generated_handler(op, messages[op.input], options, sources,
                                                           shared=sum(o.input == op.input for o in ops if o.answer) > 1)
            out += [""] + handler
            decoders += [""] + decoder
        out += ["}"]
    for reader in body_readers.values():
        decoders += [""] + reader
    return "\n".join(out + decoders) + "\n"
