"""The Swift message types of one proto file: a struct per message that speaks the proto3 JSON
mapping (the form every message travels in on the bus), with the fileprivate helpers it needs.
"""
from .descriptors import MARKER, SCALARS, json_name, namespace, swift_ident


# Swift helpers, emitted fileprivate into each file that needs them (so the files stay independent).
HELPERS = {
    "decode": """\
extension KeyedDecodingContainer where Key == ProtoJSONKey {
    /// The value under the first of `names` that is present and not null (proto3 parsers accept
    /// both the proto field name and its lowerCamelCase JSON name).
    fileprivate func decodeProto<T: Decodable>(_ type: T.Type, _ names: String...) throws -> T? {
        for name in names {
            if let value = try decodeIfPresent(type, forKey: ProtoJSONKey(name)) { return value }
        }
        return nil
    }
}""",
    "int": """\
/// A proto3 JSON integer: a JSON number or a decimal string (64-bit integers are printed as strings).
fileprivate struct ProtoJSONInteger<T: FixedWidthInteger & Decodable>: Decodable {
    let value: T
    init(from decoder: Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let text = try? container.decode(String.self) {
            guard let value = T(text) else {
                throw DecodingError.dataCorruptedError(in: container, debugDescription: "not an integer: \\(text)")
            }
            self.value = value
        } else {
            self.value = try container.decode(T.self)
        }
    }
}""",
    "bytes": """\
/// proto3 JSON bytes: printed as standard base64; parsed from standard or URL-safe, padded or not.
/// Done here rather than by the encoder's data strategy so a caller's settings cannot change it.
fileprivate struct ProtoJSONBytes: Codable {
    let value: Data
    init(_ value: Data) { self.value = value }
    init(from decoder: Decoder) throws {
        let container = try decoder.singleValueContainer()
        var text = try container.decode(String.self)
            .replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        text += String(repeating: "=", count: (4 - text.count % 4) % 4)
        guard let value = Data(base64Encoded: text) else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "not base64")
        }
        self.value = value
    }
    func encode(to encoder: Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(value.base64EncodedString())
    }
}""",
}
# Kinds whose JSON is not Swift's own Codable form: kind -> (HELPERS wrapper decoded from JSON,
# its `.value` being the Swift value; JSON form of a Swift value `{}` for encoding).
WRAPPED = {"int": ("int", "ProtoJSONInteger<{t}>", "{}"), "int64": ("int", "ProtoJSONInteger<{t}>", "String({})"),
           "bytes": ("bytes", "ProtoJSONBytes", "ProtoJSONBytes({})")}


def render_field(f, used):
    """Return (declaration type, default, decode statement, encode statement) for one field."""
    prop, snake, camel = swift_ident(json_name(f.name)), f.name, json_name(f.name)
    key = f'ProtoJSONKey("{snake}")'
    helper, wire, form = WRAPPED.get(f.kind, ("decode", "{t}", "{}"))
    wire, unwrap = wire.format(t=f.swift_type), "?.value" if f.kind in WRAPPED else ""
    used.update({"decode", helper})
    names = f'"{snake}"' + (f', "{camel}"' if camel != snake else "")
    if f.label == "repeated":
        decl, default = f"[{f.swift_type}]", "[]"
        unwrap = "?.map(\\.value)" if unwrap else ""
        decode = f"try container.decodeProto([{wire}].self, {names}){unwrap} ?? []"
        json = f"self.{prop}" if form == "{}" else f"self.{prop}.map {{ {form.format('$0')} }}"
        encode = f"if !self.{prop}.isEmpty {{ try container.encode({json}, forKey: {key}) }}"
    elif f.label == "optional" or f.kind == "message":
        # Explicit presence: nil is absent, anything else is printed, even a default value.
        decl, default = f"{f.swift_type}?", "nil"
        decode = f"try container.decodeProto({wire}.self, {names}){unwrap}"
        encode = f"if let value = self.{prop} {{ try container.encode({form.format('value')}, forKey: {key}) }}"
    else:
        # Implicit presence: the default value is what an absent key means, so it is not printed.
        decl, default = f.swift_type, SCALARS[f.type][1]
        decode = f"try container.decodeProto({wire}.self, {names}){unwrap} ?? {default}"
        test = {"bool": "self.{p}", "plain": "!self.{p}.isEmpty", "bytes": "!self.{p}.isEmpty"}.get(f.kind, "self.{p} != 0")
        encode = f"if {test.format(p=prop)} {{ try container.encode({form.format('self.' + prop)}, forKey: {key}) }}"
    return decl, default, f"self.{prop} = {decode}", encode


def doc_lines(doc, indent):
    return [f"{indent}///{' ' + line if line else ''}" for line in doc]


def render_bounds(msg, options, indent):
    """Each integer field's declared bounds (and default) as constants of its message: the one
    declaration that the gateway's body reader, the worker carrying the command out and the
    console's forms all check against."""
    out = []
    for f in msg.fields:
        rules = f.options.Extensions[options.field]
        if f.type != "int32" or f.label == "repeated" or not rules.maximum > rules.minimum:
            continue
        prop = swift_ident(json_name(f.name))
        out += [f"{indent}/// `{f.name}`'s declared bounds.",
                f"{indent}public static let {prop}Range: ClosedRange<Int> = {rules.minimum}...{rules.maximum}"]
        if rules.default:
            out += [f"{indent}/// `{f.name}`'s declared default.",
                    f"{indent}public static let {prop}Default = {int(rules.default)}"]
    return out


def render_message(pf, msg, used, options):
    i1, i2, i3 = " " * 4, " " * 8, " " * 12
    fields = [(swift_ident(json_name(f.name)), f, *render_field(f, used)) for f in msg.fields]
    out = doc_lines(msg.doc, i1) + [f"{i1}public struct {msg.name}: ProtoMessage {{",
                                    f'{i2}public static let protoName = "{pf.package}.{msg.name}"']
    out += render_bounds(msg, options, i2)
    out += [""] if fields else []
    for prop, f, decl, *_ in fields:
        out += doc_lines(f.doc, i2) + [f"{i2}public var {prop}: {decl}"]
    if fields:
        params = ",\n".join(f"{i3}{prop}: {decl} = {default}" for prop, _, decl, default, *_ in fields)
        out += ["", f"{i2}public init(\n{params}\n{i2}) {{"] + [f"{i3}self.{p} = {p}" for p, *_ in fields]
        out += [f"{i2}}}"]
    else:
        out += ["", f"{i2}public init() {{}}"]
    # A message without fields must still be a JSON object both ways, hence the `_ =` forms.
    decoder = "let container = try" if fields else "_ = try"
    encoder = "var container =" if fields else "_ ="
    out += ["", f"{i2}public init(from decoder: Decoder) throws {{",
            f"{i3}{decoder} decoder.container(keyedBy: ProtoJSONKey.self)"]
    out += [f"{i3}{decode}" for *_, decode, _ in fields]
    out += [f"{i2}}}", "", f"{i2}public func encode(to encoder: Encoder) throws {{",
            f"{i3}{encoder} encoder.container(keyedBy: ProtoJSONKey.self)"]
    out += [f"{i3}{encode}" for *_, encode in fields]
    return out + [f"{i2}}}", f"{i1}}}"]


def render_file(pf, declares_namespace, options):
    ns, used = namespace(pf.package), set()
    body = []
    for msg in pf.messages:
        body += ([""] if body else []) + render_message(pf, msg, used, options)
    out = [f"{MARKER} from {pf.cited}. Do not edit: change the .proto file and run `make proto`."]
    if pf.doc:  # the file's own comment explains what the messages are for
        out += [""] + [f"//{' ' + line if line else ''}" for line in pf.doc]
    out += ["", "import Foundation", ""]
    if declares_namespace:  # only once per package, in case a package spans several files
        out += [f"/// Messages of the proto package `{pf.package}`.", f"public enum {ns} {{}}", ""]
    out += [f"extension {ns} {{"] + body + ["}"]
    for name in HELPERS:  # fixed order keeps the output stable
        if name in used:
            out += [""] + HELPERS[name].splitlines()
    return "\n".join(out) + "\n"
