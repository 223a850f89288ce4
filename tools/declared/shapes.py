"""The shapes of what the API answers (messages with a `shape` option, answers.proto): each one's
JSON Schema and example, and the shared responses that carry them in the API document.
"""
import json

from .descriptors import ProtoError


SHAPE_TYPES = {"string": "string", "bool": "boolean", "int32": "integer", "int64": "integer",
               "uint32": "integer", "uint64": "integer", "double": "number"}


def is_shape(msg, options):
    return msg.options is not None and msg.options.HasExtension(options.shape)


def shape_value(f, text, rules):
    """A field's example as JSON: strings as written, other values (and objects) parsed."""
    if f.type == "string" and f.label != "repeated" and rules.format != "object":
        return text
    return json.loads(text)


def shape_schema(msg, options):
    """The JSON Schema of an answer's shape, from its fields and their rules."""
    properties, required = {}, []
    for f in msg.fields:
        rules = f.options.Extensions[options.field]
        if f.kind == "message":
            item = {"$ref": f"#/components/schemas/{f.type.rsplit('.', 1)[-1]}"}
        elif rules.format == "object":
            item = {"type": "object"}
        else:
            item = {"type": SHAPE_TYPES[f.type]}
            if rules.format:
                if rules.format != "date-time":
                    raise ProtoError(f.where, "a shape's field formats are date-time and object")
                item["format"] = "date-time"
        if rules.allowed:
            item = {"const": rules.allowed[0]} if len(rules.allowed) == 1 else {"enum": list(rules.allowed)}
        if rules.schema:
            item = json.loads(rules.schema)
        schema = item
        if f.label == "repeated":
            schema = {"type": "array", "items": item}
            if rules.minimum or rules.maximum:
                schema.update({"minItems": rules.minimum, "maxItems": rules.maximum})
        elif f.label == "optional":
            if "type" in item and not rules.allowed:
                schema = {**item, "type": [item["type"], "null"]}
            else:
                schema = {"oneOf": [item, {"type": "null"}]}
        if rules.description:
            schema = {**schema, "description": rules.description}
        if rules.example:
            schema = {**schema, "examples": [shape_value(f, rules.example, rules)]}
        properties[f.name] = schema
        if not rules.omitted:
            required.append(f.name)
    schema = {"type": "object"}
    if required:
        schema["required"] = required
    if properties:
        schema["properties"] = properties
    base = msg.options.Extensions[options.shape].extends if is_shape(msg, options) else ""
    return {"allOf": [{"$ref": f"#/components/schemas/{base}"}, schema]} if base else schema


def shape_example(msg, options, shapes):
    """An example of a shape made of its fields' examples (nested and extended shapes' too); None
    when none has one."""
    base = msg.options.Extensions[options.shape].extends if is_shape(msg, options) else ""
    if base and base not in shapes:
        raise ProtoError(msg.where, f"extends {base}, which is no shape")
    example = dict(shape_example(shapes[base], options, shapes) or {}) if base else {}
    for f in msg.fields:
        rules = f.options.Extensions[options.field]
        if rules.example:
            example[f.name] = shape_value(f, rules.example, rules)
        elif f.kind == "message" and f.type.rsplit(".", 1)[-1] in shapes:
            inner = shape_example(shapes[f.type.rsplit(".", 1)[-1]], options, shapes)
            if inner is not None:
                example[f.name] = [inner] if f.label == "repeated" else inner
    return example or None


def shape_components(shape_messages, options):
    """The document's schemas (one per shape) and shared responses (each shape's `shape` option)."""
    shapes = {m.name: m for m in shape_messages}
    schemas, responses = {}, {}
    for msg in shape_messages:
        schemas[msg.name] = shape_schema(msg, options)
        rule = msg.options.Extensions[options.shape]
        ref = {"$ref": f"#/components/schemas/{msg.name}"}
        example = shape_example(msg, options, shapes)
        for name, description, data in ((rule.response, rule.description, ref),
                                        (rule.list_response, rule.list_description, {"type": "array", "items": ref})):
            if not name:
                continue
            if name in responses:
                raise ProtoError(msg.where, f"response {name} is declared twice")
            if not description:
                raise ProtoError(msg.where, f"response {name} has a description")
            media = {"schema": data if rule.bare else {"type": "object", "required": ["data"], "properties": {"data": data}}}
            if example is not None:
                shown = [example] if data is not ref else example
                media["example"] = shown if rule.bare else {"data": shown}
            responses[name] = {"description": description, "content": {"application/json": media}}
            if rule.bare and data is not ref:
                raise ProtoError(msg.where, "a bare response is one shape, not a list")
    return schemas, responses
