"""Request bodies, from the fields of their commands (or of a body message) and those fields'
rules: the JSON Schema the API document shows and the Swift reader that checks the same rules,
so what is documented and what is accepted cannot drift apart; and, for an operation with a
declared answer, its whole handler.
"""
import json

from .descriptors import ProtoError, json_name, swift_ident
from .operations import ANSWERS, QUEUE_OF_PACKAGE, lower_camel, swift_type_of


# Field formats a generated body reader checks, and what each adds to the field's JSON Schema.
FORMATS = {"email": {"format": "email", "maxLength": 254}, "password": {"minLength": 8, "maxLength": 256},
           "code": {}, "username": {"pattern": "^[A-Za-z0-9_.]{3,32}$"}, "guest_secret": {"minLength": 32, "maxLength": 256},
           "phone": {"maxLength": 64}, "object": {"type": "object"},
           "url": {"format": "uri", "pattern": "^[Hh][Tt][Tt][Pp][Ss]?://"}, "e164": {"pattern": "^\\+[1-9][0-9]{6,14}$"},
           "locale": {"maxLength": 35, "pattern": "^[A-Za-z]{2,3}(-[A-Za-z0-9]{1,8})*$"}}
# Formats checked by a FieldRules function (a problem of shape, collected with the others).
VALIDATORS = {"username": "FieldRules.username", "guest_secret": "FieldRules.guestSecret", "url": "FieldRules.httpURL",
              "e164": "AdminFields.phone", "locale": "FieldRules.locale"}


def body_fields(msg, options, fixed=()):
    """The fields of a command its body carries (the rest the gateway fills), with their rules."""
    out = []
    for f in msg.fields:
        rules = f.options.Extensions[options.field]
        if options.Source.Name(rules.source) != "SOURCE_UNSPECIFIED" or f.name == "app_id" or f.name in fixed:
            continue  # (fixed holds the route's constants and its path fields)
        if f.type not in ("string", "int32", "bool") or (f.label == "repeated" and not rules.reader):
            raise ProtoError(f.where, "a generated body reader reads string, int32 and bool fields (lists: with a reader)")
        if f.type == "int32" and not (rules.maximum > rules.minimum):
            raise ProtoError(f.where, "an int32 body field declares its minimum and maximum")
        out.append((f, rules))
    return out


def body_schema(msg, options, fixed=()):
    """The JSON Schema of a generated body, from its fields' rules."""
    properties, required = {}, []
    either = list(msg.options.Extensions[options.body].one_of_required) if msg.options else []
    for f, rules in body_fields(msg, options, fixed):
        # A field that one_of_required names counts only as a string (null is no value).
        nullable = f.label == "optional"
        kind = {"int32": "integer", "bool": "boolean"}.get(f.type, "string")
        schema = {"type": [kind, "null"]} if nullable else {"type": kind}
        if f.type == "int32":
            schema.update({"minimum": rules.minimum, "maximum": rules.maximum})
        if rules.default:
            schema["default"] = json.loads(rules.default)
        if rules.format:
            if rules.format not in FORMATS:
                raise ProtoError(f.where, f"format {rules.format!r} is not one the body reader checks")
            schema.update(FORMATS[rules.format])
        if rules.format == "object" and (f.label == "optional" or not f.name.endswith("_json")):
            raise ProtoError(f.where, "an object body field is a required *_json string of the command")
        if rules.min_length:
            schema["minLength"] = rules.min_length
        if rules.max_length and rules.format != "code" and not rules.allowed:
            schema["maxLength"] = rules.max_length
        if rules.allowed:
            schema["enum"] = list(rules.allowed) + ([None] if f.label == "optional" else [])
        if rules.description:
            schema["description"] = rules.description
        if rules.example:
            schema["examples"] = [json.loads(rules.example) if rules.format == "object" or f.type == "int32" else rules.example]
        if rules.reader:
            schema = json.loads(rules.schema) if rules.schema else {}
            if rules.description:
                schema["description"] = rules.description
        key = rules.body_name or f.name
        properties[key] = schema
        if f.label == "" and not rules.default:
            required.append(key)
        if rules.format == "phone":
            properties["country_code"] = {"type": ["string", "null"], "maxLength": 4,
                                          "description": "For a national number: an ISO 3166 region (FR) or a calling code (33, +33)"}
    schema = {"type": "object", "required": required, "properties": properties}
    given = lambda name: {"required": [name], "properties": {name: {"not": {"type": "null"}}}}
    rules_across = []
    if either:
        rules_across.append({"anyOf": [given(name) for name in either]})
    for field_, others in needs_of(msg, options):
        rules_across.append({"anyOf": [{"not": given(field_)}] + [given(name) for name in others]})
    if len(rules_across) == 1:
        schema.update(rules_across[0])
    elif rules_across:
        schema["allOf"] = rules_across
    return schema


def needs_of(msg, options):
    """The message's `needs` rules as (field, [others])."""
    out = []
    for rule in (msg.options.Extensions[options.body].needs if msg.options else []):
        field_, colon, others = rule.partition(":")
        names = [n.strip() for n in others.split(",") if n.strip()]
        if not colon or not names:
            raise ProtoError(msg.where, f"needs {rule!r} is not 'field: other, other'")
        out.append((field_.strip(), names))
    return out


def render_generated_handler(op, msg, options, sources, shared=False):
    """The decoder of an operation's command and its handler, for an operation with `answer`.

    The body's fields are read in declaration order, every problem of shape collected into one
    422 `auth/validation-failed`; then each field's format is checked in that order (an address
    is `auth/invalid-email`, a password under the policy `auth/weak-password`); then the fields
    the gateway fills in: the caller, the client, the guest an upgrading call names."""
    i1, i2, i3 = " " * 4, " " * 8, " " * 12
    t = swift_type_of(op.input)
    reply, renderer = ANSWERS[op.answer]
    renderer = renderer.format(status=op.status)
    if op.output != reply:
        raise ProtoError(op.where, f"answer {op.answer!r} renders {reply}, not {op.output}")
    src = sources.get(op.input, {})
    caller = op.access not in ("PUBLIC", "APP_KEY", "SECRET_KEY", "INTERNAL", "GUEST", "BEARER_OPTIONAL")
    if not caller and any(src[k].label != "optional" for k in ("CALLER_UID", "CALLER_SESSION") if k in src):
        raise ProtoError(op.where, "a command that names its caller is sent by a BEARER operation")
    optional_caller = op.access == "BEARER_OPTIONAL"
    if optional_caller and any(src[k].label != "optional" for k in ("CALLER_UID", "CALLER_SESSION") if k in src):
        raise ProtoError(op.where, "a BEARER_OPTIONAL command's caller fields are optional")
    upgrades = "GUEST_UID" in src or optional_caller
    if "GUEST_UID" in src and op.access != "GUEST":
        raise ProtoError(op.where, "a command that upgrades a guest is sent by a GUEST operation")
    # Routes that share a command (and differ in a fixed field) each have their own decoder.
    label = f"{lower_camel(op.name)}BodyOf" if shared else "declaredBodyOf"
    signature = f"{label} context: RouteContext" + (", auth: Authenticator" if upgrades else "")
    lines = [f"extension {t} {{",
             f"{i1}/// The command of {op.method} {op.path}: the body read by its fields' declared rules,",
             f"{i1}/// the caller's fields filled by the gateway.",
             f"{i1}init({signature}) throws {{"]
    if caller:
        lines.append(f"{i2}let caller = try context.requireCaller()")
    else:
        lines.append(f"{i2}let app = try context.requireApp()")
    fields = body_fields(msg, options, {**op.fixed, **op.path_fields})

    unknown = (set(op.fixed) | set(op.path_fields)) - {f.name for f in msg.fields}
    if unknown:
        raise ProtoError(op.where, f"fixed names no field of {op.input}: {sorted(unknown)}")
    for name, parameter in op.path_fields.items():
        # The pipeline answered 404 for a parameter too long to name anything (Router.parametersAreIds).
        lines.append(f'{i2}guard let {swift_ident(json_name(name))} = context.request.parameters["{parameter}"] '
                     f'else {{ throw ServiceError.notFound }}')
    lines += render_body_reading(fields)
    args = []
    for f in msg.fields:
        name = json_name(f.name)
        rules = f.options.Extensions[options.field]
        source = options.Source.Name(rules.source)
        if f.name == "app_id":
            args.append(f"appId: {'caller.aud' if caller else 'app.id'}")
        elif f.name in op.fixed:
            args.append(f"{name}: {json.dumps(op.fixed[f.name])}")
        elif f.name in op.path_fields:
            args.append(f"{name}: {swift_ident(name)}")
        elif source == "CALLER_UID" and optional_caller:
            args.append(f"{name}: caller?.sub")
        elif source == "CALLER_SESSION" and optional_caller:
            args.append(f"{name}: caller?.sid")
        elif source in ("CALLER_UID", "CALLER_SESSION") and not caller:
            args.append(f"{name}: nil")
        elif source == "CALLER_UID":
            args.append(f"{name}: caller.sub")
        elif source == "CALLER_SESSION":
            args.append(f"{name}: caller.sid")
        elif source == "CLIENT":
            args.append(f"{name}: context.clientInfo")
        elif source == "CLEARED":
            args.append(f"{name}: cleared")
        elif source == "GUEST_UID":
            args.append(f"{name}: try auth.upgradingGuest(context)")
        elif source != "SOURCE_UNSPECIFIED":
            raise ProtoError(f.where, f"source {source} is not filled by a generated handler")
        else:
            args.append(f"{name}: {field_value(f, rules)}")
    if optional_caller:
        # After the body: a body's problems answer before a token's.
        lines.append(f"{i2}let caller = try auth.optionalCaller(context)")
    lines += [f"{i2}self.init({', '.join(args)})", f"{i1}}}", "}"]
    call = f"{t}({label}: context" + (", auth: auth)" if upgrades else ")")
    handler = [f"{i1}/// {op.method} {op.path}: generated from its declaration.",
               f"{i1}func {lower_camel(op.name)}(_ context: RouteContext) throws -> RouteResult {{",
               f"{i2}let command = try {call}",
               f"{i2}return commands.send(command, expecting: {swift_type_of(reply)}.self"
               + (f", queue: {QUEUE_OF_PACKAGE[op.input.rsplit('.', 1)[0]]}" if op.input.rsplit('.', 1)[0] in QUEUE_OF_PACKAGE else "")
               + ", appId: command.appId,",
               f"{i2}                     request: context.request, render: {renderer})",
               f"{i1}}}"]
    return lines, handler, upgrades


def field_value(f, rules):
    """A read body field as the command (or body message) keeps it."""
    var = swift_ident(json_name(f.name))
    if rules.format != "code":
        return var
    # Any string is a guess; a long one is cut to what a code could be and is wrong.
    cut = rules.max_length or 32
    return f"{var}.map {{ String($0.prefix({cut})) }}" if f.label == "optional" else f"String({var}.prefix({cut}))"


def render_body_message(op, msg, options):
    """The reader of a body declared as its own message (gateway.proto): the handler, written by
    hand, turns it into the command (a choice between fields, two commands, a provider's token)."""
    i1, i2 = " " * 4, " " * 8
    fields = body_fields(msg, options)
    filled = [f for f in msg.fields if options.Source.Name(f.options.Extensions[options.field].source) != "SOURCE_UNSPECIFIED"]
    for f in filled:
        if options.Source.Name(f.options.Extensions[options.field].source) not in ("CLEARED", "GIVEN"):
            raise ProtoError(f.where, "a body message's fields come from the body (or say which were CLEARED or GIVEN)")
    lines = [f"extension GatewayV1.{msg.name} {{",
             f"{i1}/// The body of {op.method} {op.path} (and any other operation that names it), read by",
             f"{i1}/// its fields' declared rules.",
             f"{i1}init(declaredBodyOf context: RouteContext) throws {{"]
    either = list(msg.options.Extensions[options.body].one_of_required)
    unknown = set(either) - {f.name for f, _ in fields}
    if unknown or len(either) == 1:
        raise ProtoError(op.where, f"one_of_required names two or more of {msg.name}'s fields")
    at = msg.options.Extensions[options.body].one_of_required_at or (either[0] if either else "")
    if either and at not in either:
        raise ProtoError(op.where, f"one_of_required_at names one of {either}")
    lines += render_body_reading(fields, optional_body=not op.body, either=either, needs=needs_of(msg, options), either_at=at)
    args = []
    for f in msg.fields:
        rules = f.options.Extensions[options.field]
        source = options.Source.Name(rules.source)
        if source == "CLEARED":
            args.append(f"{json_name(f.name)}: cleared")
        elif source == "GIVEN":
            args.append(f'{json_name(f.name)}: body.value("{rules.body_name}") != nil')
        elif f.label == "repeated":
            args.append(f"{json_name(f.name)}: {field_value(f, rules)} ?? []")
        else:
            args.append(f"{json_name(f.name)}: {field_value(f, rules)}")
    lines += [f"{i2}self.init({', '.join(args)})", f"{i1}}}", "}"]
    return lines


def render_body_reading(fields, optional_body=False, either=(), needs=(), either_at=""):
    """The Swift that reads a body's fields by their declared rules: in declaration order, every
    problem of shape collected into one 422 `auth/validation-failed`; then each field's format
    is checked in that order (an address is `auth/invalid-email`, a password under the policy
    `auth/weak-password`, a phone number that is none `auth/invalid-phone-number`)."""
    i2, i3 = " " * 8, " " * 12
    lines = []
    if any(rules.null_clears for _, rules in fields):
        lines.append(f"{i2}var cleared: [String] = []")
    if fields:
        lines.append(f"{i2}var body = try BodyReader(optional: context.request.body)" if optional_body
                     else f"{i2}var body = try BodyReader(context)")
    checks = []
    for f, rules in fields:
        var, key = swift_ident(json_name(f.name)), rules.body_name or f.name
        if rules.format and rules.format not in FORMATS:
            raise ProtoError(f.where, f"format {rules.format!r} is not one the body reader checks")
        validator = VALIDATORS.get(rules.format)
        bound = f"let {var}, " if f.label == "optional" else ""
        values = list(rules.allowed)
        allowed = ", ".join(values[:-1]) + " or " + values[-1] if len(values) > 1 else "".join(values)
        if values and validator:
            raise ProtoError(f.where, "a field with allowed values has no format")
        if values and f.label == "optional":
            validator = f'{{ {json.dumps(values)}.contains($0) ? nil : "must be {allowed}" }}'
        if rules.min_length and f.label == "optional":
            if validator:
                raise ProtoError(f.where, "an optional field with min_length has no other rule")
            low = rules.min_length
            validator = (f'{{ $0.unicodeScalars.count >= {low} ? nil : '
                         f'"must be at least {low} character{"s" if low > 1 else ""}" }}')

        if f.type == "bool":
            if f.label != "optional":
                raise ProtoError(f.where, "a bool body field is optional")
            lines.append(f'{i2}let {var} = body.optionalBool("{key}")')
            continue
        if f.type == "int32":
            read = f'body.optionalInteger("{key}", in: Self.{var}Range)'
            if rules.default:
                lines.append(f"{i2}let {var} = Int32({read} ?? Self.{var}Default)")
            elif f.label == "optional":
                lines.append(f"{i2}let {var} = {read}.map {{ Int32($0) }}")
            else:
                raise ProtoError(f.where, "a required int32 body field has a default")
            continue
        if rules.reader:
            lines.append(f'{i2}let {var} = {rules.reader}("{key}", &body)')
        elif f.label == "optional":
            limit = rules.max_length or 256
            validate = f", validate: {validator}" if validator else ""
            read = f'body.optionalString("{key}", maxLength: {limit}{validate})'
            if rules.null_clears:
                lines += [f"{i2}let {var}Given = {read}", f"{i2}let {var} = {var}Given.string",
                          f'{i2}if {var}Given == .null {{ cleared.append("{key}") }}']
            else:
                lines.append(f"{i2}let {var} = {read}.string")
        elif rules.format == "object":
            lines.append(f'{i2}let {var} = body.requiredObject("{key}")?.serialized')
        else:
            lines.append(f'{i2}let {var} = body.requiredString("{key}")')
            if rules.max_length and rules.format != "code":
                low = rules.min_length
                words = f"{low} to {rules.max_length} characters" if low else f"at most {rules.max_length} characters"
                test = (f"!({low}...{rules.max_length}).contains({var}.unicodeScalars.count)" if low
                        else f"{var}.unicodeScalars.count > {rules.max_length}")
                lines += [f"{i2}if let {var}, {test} {{",
                          f'{i3}body.add(.init(location: "body.{key}", message: "must be {words}"))', f"{i2}}}"]
        # Problems of shape are collected, so one 422 names every field that is wrong.
        if values and f.label != "optional":
            lines += [f"{i2}if let {var}, !{json.dumps(values)}.contains({var}) {{",
                      f'{i3}body.add(.init(location: "body.{key}", message: "must be {allowed}"))', f"{i2}}}"]
        if validator and f.label != "optional":
            lines += [f"{i2}if let {var}, let problem = {validator}({var}) {{",
                      f'{i3}body.add(.init(location: "body.{key}", message: problem))', f"{i2}}}"]
        if rules.format == "phone":
            lines.append(f'{i2}let {var}Country = body.optionalString("country_code", maxLength: 4).string')
        # Then the checks with their own answers, once the shape is right.
        if rules.format == "email":
            checks.append(f'{i2}if {bound}!EmailAddress.isValid({var}) {{ throw ServiceError.invalidEmail(at: "body.{key}") }}')
        elif rules.format == "password":
            checks += [f"{i2}if {bound}let problem = PasswordPolicy.problem(with: {var}) {{",
                       f'{i3}throw ServiceError.weakPassword(problem, at: "body.{key}")', f"{i2}}}"]
        elif rules.format == "phone":
            if f.label == "optional":
                raise ProtoError(f.where, "a phone number read by the body reader is required")
            checks += [f"{i2}guard let {var} = PhoneNumber.normalize({var}, country: {var}Country) else {{",
                       f'{i3}throw ServiceError.invalidPhoneNumber(at: "body.{key}")', f"{i2}}}"]
    names = {f.name: swift_ident(json_name(f.name)) for f, _ in fields}
    if either:
        # One of these fields is needed (the schema's anyOf); the problem names `either_at`.
        words = " or ".join(either) if len(either) == 2 else "one of " + ", ".join(either[:-1]) + " or " + either[-1]
        lines += [f"{i2}if {' && '.join(names[n] + ' == nil' for n in either)} {{",
                  f'{i3}body.add(.init(location: "body.{either_at}", message: "{words} is required"))',
                  f"{i2}}}"]
    for field_, others in needs:
        if field_ not in names or any(n not in names for n in others):
            raise ProtoError("needs", f"{field_}: {others} names a field the body does not have")
        lines += [f"{i2}if {names[field_]} != nil, {' && '.join(names[n] + ' == nil' for n in others)} {{",
                  f'{i3}body.add(.init(location: "body.{field_}", message: "needs {" or ".join(others)}"))',
                  f"{i2}}}"]
    if fields:
        lines.append(f"{i2}try body.finish()")
    required = [swift_ident(json_name(f.name)) for f, _ in fields if f.label == "" and f.type == "string"]
    if required:
        lines.append(f"{i2}guard {', '.join(f'let {v}' for v in required)} else {{ throw ServiceError.validationFailed([]) }}")
    lines += checks
    return lines
