import Foundation
import IdentityKit

/// The served OpenAPI document is `OpenAPIDocument.json` (prose, shared components, the
/// service's own routes), each declared operation as proto/ declares it (`source`), plus what
/// the route table declares, so the two cannot drift:
/// - every error answer of each operation, one response per status: the pipeline's errors for
///   a route of its kind (`Gateway.pipelineErrors`) and the route's own `errors`. Each is
///   problem+json whose schema pins `status` and enumerates the `code`s (also listed as
///   `x-error-codes`, and with their meaning in the description);
/// - each rate-limited operation's `x-rate-limits` (names and defaults) and its 429's headers;
/// - `X-Request-Id` on every answer of every operation;
/// - `x-error-catalogue`: every code once, with what it means (the reference page's sections).
extension OpenAPIDocument {
    /// The document before its error answers: `json` with each declared operation of `routes`
    /// where its declaration says (success answers only, like the hand-written part).
    static func source(routes: [Route]) -> JSONValue? {
        guard case .object(var document)? = JSONValue.parse(Data(json.utf8), maximumBytes: 1 << 20),
              case .object(var paths)? = document["paths"] else { return nil }
        for route in routes {
            guard let declared = route.operation else { continue }
            var item: [String: JSONValue] = [:]
            if case .object(let existing)? = paths[declared.pattern] { item = existing }
            item[declared.method.lowercased()] = operation(declared)
            paths[declared.pattern] = .object(item)
        }
        document["paths"] = .object(paths)
        // The declared services' tags, then the document's own (its routes that proto/ does not declare).
        var ownTags: [JSONValue] = []
        if case .array(let own)? = document["tags"] { ownTags = own }
        document["tags"] = .array(tags(routes) + ownTags)
        // The request schemas, the answers' shapes and their responses, generated from proto/,
        // join the shared components written here.
        if case .object(var components)? = document["components"] {
            let generated = [("schemas", DeclaredOperation.requestSchemas), ("schemas", DeclaredOperation.answerSchemas),
                             ("responses", DeclaredOperation.answerResponses)]
            for (kind, parts) in generated {
                guard case .object(var shared)? = components[kind] else { continue }
                for (name, text) in parts {
                    if let part = JSONValue.parse(Data(text.utf8)) { shared[name] = part }
                }
                components[kind] = .object(shared)
            }
            document["components"] = .object(components)
        }
        return .object(document)
    }

    /// A body example: the schema's own (`examples`), else one made of the examples its fields
    /// declare (nil when none does).
    static func example(of schema: JSONValue) -> JSONValue? {
        if case .array(let own)? = schema["examples"], let first = own.first { return first }
        guard case .object(let properties)? = schema["properties"] else { return nil }
        var example: [String: JSONValue] = [:]
        for (name, property) in properties {
            if case .array(let values)? = property["examples"], let first = values.first { example[name] = first }
        }
        return example.isEmpty ? nil : .object(example)
    }

    static func rendered(routes: [Route]) -> Data {
        guard case .object(var document)? = source(routes: routes), case .object(var paths)? = document["paths"] else {
            return Data(json.utf8)
        }
        for route in routes {
            let method = route.method.lowercased()
            guard case .object(var item)? = paths[route.pattern], case .object(var operation)? = item[method] else {
                continue
            }
            var answers: [String: JSONValue] = [:]
            if case .object(let existing)? = operation["responses"] { answers = existing }
            for (status, errors) in documentedErrors(of: route) {
                answers[String(status)] = errorResponse(status: status, errors: errors, limited: !route.limits.isEmpty)
            }
            if route.secretKey?.oauthClient == true { answers["401"] = OAuthClientError.documented }
            operation["responses"] = .object(answers)
            if !route.limits.isEmpty {
                operation["x-rate-limits"] = .array(route.limits.map { limit in
                    let own = "\(limit.policy.name): \(limit.policy.count) per \(Int(limit.policy.window)) s per \(limit.subject.documented)"
                    guard let device = limit.knownDevice else { return .string(own) }
                    // One entry per declared limit: the known-device budget stands in for this one.
                    return .string(own + "; once spent, a device that signed in before (X-Device-Token) has "
                                   + "\(device.name): \(device.count) per \(Int(device.window)) s of its own")
                })
            }
            item[method] = .object(operation)
            paths[route.pattern] = .object(item)
        }
        for (path, item) in paths {
            guard case .object(var operations) = item else { continue }
            for (method, operation) in operations {
                guard case .object(var fields) = operation, let answers = fields["responses"] else { continue }
                fields["responses"] = withRequestId(answers)
                operations[method] = .object(fields)
            }
            paths[path] = .object(operations)
        }
        document["paths"] = .object(paths)
        document["x-error-catalogue"] = errorCatalogue(routes: routes)
        if case .object(var components)? = document["components"], let shared = components["responses"] {
            components["responses"] = withRequestId(shared)
            document["components"] = .object(components)
        }
        return Data(JSONValue.object(document).serialized.utf8)
    }

    /// One declared operation: what proto/ says, then the document's own part of it.
    static func operation(_ declared: DeclaredOperation) -> JSONValue {
        let ref = { (kind: String, name: String) in JSONValue.object(["$ref": .string("#/components/\(kind)/\(name)")]) }
        var entry: [String: JSONValue] = [
            "summary": .string(declared.document.summary),
            "operationId": .string(declared.id),
            "tags": .array([.string(declared.service)]),
            "security": security(declared.access, basicAllowed: declared.audit == nil),
        ]
        if let description = declared.document.description { entry["description"] = .string(description) }
        if !declared.document.parameters.isEmpty {
            entry["parameters"] = .array(declared.document.parameters.map { ref("parameters", $0) })
        } else if !pathParameters(declared.pattern).isEmpty {
            entry["parameters"] = .array(pathParameters(declared.pattern).map { name in
                .object(["name": .string(name), "in": "path", "required": .bool(true), "schema": .object(["type": "string"])])
            })
        }
        // The body's schema: a shared component by name, else the one generated from the
        // command's fields; with an example when the fields declare theirs.
        let generated = declared.document.generatedRequest.flatMap { JSONValue.parse(Data($0.utf8)) }
        let shared = declared.document.request.flatMap { name in
            DeclaredOperation.requestSchemas[name].flatMap { JSONValue.parse(Data($0.utf8)) } ?? handWrittenSchemas[name]
        }
        let schema = declared.document.request.map { ref("schemas", $0) } ?? generated
        if let schema {
            var media: [String: JSONValue] = ["schema": schema]
            if let example = (generated ?? shared).flatMap(example(of:)) { media["example"] = example }
            entry["requestBody"] = .object(["required": .bool(declared.takesBody), "content": .object([
                "application/json": .object(media)])])
        }
        // The success answer: a shape's shared response, or none (204); a sign-in may challenge.
        var answers: [String: JSONValue] = [:]
        if let response = declared.document.response {
            answers[String(declared.status)] = ref("responses", response)
        } else if declared.status == 204 {
            answers["204"] = .object(["description": "Done: no content"])
        }
        if declared.document.mfaChallenge { answers["202"] = ref("responses", "MfaRequired") }
        if !answers.isEmpty { entry["responses"] = .object(answers) }
        if case .object(let own)? = allOperationParts[declared.id] { entry.merge(own) { $1 } }
        return .object(entry)
    }

    /// The schemas this document writes by hand (`json`), by name: a body read by a parser of its
    /// own (the settings update) gives its example there.
    static let handWrittenSchemas: [String: JSONValue] = {
        guard case .object(let schemas)? = JSONValue.parse(Data(json.utf8), maximumBytes: 1 << 20)?["components"]?["schemas"]
        else { return [:] }
        return schemas
    }()

    /// The `{name}` segments of a route's pattern, in order.
    static func pathParameters(_ pattern: String) -> [String] {
        pattern.split(separator: "/").compactMap { segment in
            segment.hasPrefix("{") && segment.hasSuffix("}") ? String(segment.dropFirst().dropLast()) : nil
        }
    }

    /// The security schemes a declared access means.
    static func security(_ access: Access, basicAllowed: Bool) -> JSONValue {
        let appKey: JSONValue = .object(["appKey": .array([])])
        let signedIn: JSONValue = .object(["appKey": .array([]), "bearer": .array([])])
        switch access {
        case .public, .internal: return .array([])
        case .appKey: return .array([appKey])
        case .guest, .bearerOptional: return .array([appKey, signedIn])
        case .bearer, .bearerFresh, .bearerFreshOrPassword, .bearerOwnProof: return .array([signedIn])
        case .secretKey:
            let key: JSONValue = .object(["secretKey": .array([])])
            return .array(basicAllowed ? [key, .object(["secretKeyBasic": .array([])])] : [key])
        }
    }

    /// One tag per declared service, in declaration order, named as in proto/ and described by
    /// the service's comment there.
    static func tags(_ routes: [Route]) -> [JSONValue] {
        var seen = Set<String>()
        let descriptions = Dictionary(DeclaredOperation.serviceDescriptions, uniquingKeysWith: { first, _ in first })
        return routes.compactMap { $0.operation?.service }.filter { seen.insert($0).inserted }.map { service in
            var tag: [String: JSONValue] = ["name": .string(service)]
            if let description = descriptions[service] { tag["description"] = .string(description) }
            return .object(tag)
        }
    }

    /// Errors any request may meet before a route is chosen or its body read (framing, routing,
    /// media type, size, JSON), and those of the service itself; the routes add their own.
    static let errorsOfEveryRequest: [ServiceError] = [
        .badRequest, .notFound, .methodNotAllowed, .payloadTooLarge, .unsupportedMediaType, .invalidJSON,
        .originNotAllowed, .internal, .unavailable,
    ]

    /// Errors of commands that only the console sends (its Members page): no HTTP route
    /// answers them, but they are codes of this service, so the catalogue explains them too.
    static let errorsOfConsoleCommands: [ServiceError] = [.consoleOwnerRequired, .lastConsoleOwner, .consoleMemberExists]

    /// Every code the service may answer, once, by code: its status, the status's title and
    /// what it means (each distinct `detail` it is answered with). The reference page makes a
    /// section of each, which is where a problem's `type` (`/api/docs#error-<code>`) points.
    static func errorCatalogue(routes: [Route]) -> JSONValue {
        var order: [String] = []
        var byCode: [String: (status: Int, details: [String])] = [:]
        let all = errorsOfEveryRequest + errorsOfConsoleCommands + routes.flatMap { documentedErrors(of: $0).flatMap(\.errors) }
        for error in all {
            if var known = byCode[error.code] {
                if !known.details.contains(error.detail) { known.details.append(error.detail) }
                byCode[error.code] = known
            } else {
                order.append(error.code)
                byCode[error.code] = (error.status, [error.detail])
            }
        }
        return .array(order.sorted().compactMap { code in
            guard let entry = byCode[code] else { return nil }
            return .object(["code": .string(code), "status": JSONValue(entry.status),
                            "title": .string(HTTPResponse.reasonPhrase(entry.status)),
                            "description": .string(entry.details.joined(separator: " "))])
        })
    }

    /// Responses (an operation's, or the shared ones) each with the `X-Request-Id` header; a
    /// `$ref` to a shared response gets it there.
    private static func withRequestId(_ answers: JSONValue) -> JSONValue {
        guard case .object(var answers) = answers else { return answers }
        for (status, answer) in answers {
            guard case .object(var response) = answer, response["$ref"] == nil else { continue }
            var headers: [String: JSONValue] = [:]
            if case .object(let existing)? = response["headers"] { headers = existing }
            headers["X-Request-Id"] = .object(["$ref": .string("#/components/headers/X-Request-Id")])
            response["headers"] = .object(headers)
            answers[status] = .object(response)
        }
        return .object(answers)
    }

    /// Every error `route` may answer, by status, each code once, in declaration order.
    static func documentedErrors(of route: Route) -> [(status: Int, errors: [ServiceError])] {
        var seen = Set<String>()
        var byStatus: [Int: [ServiceError]] = [:]
        for error in Gateway.pipelineErrors(of: route) + route.errors where seen.insert(error.code).inserted {
            byStatus[error.status, default: []].append(error)
        }
        return byStatus.keys.sorted().map { ($0, byStatus[$0] ?? []) }
    }

    private static func errorResponse(status: Int, errors: [ServiceError], limited: Bool) -> JSONValue {
        let codes = errors.map(\.code)
        var description = errors.map { "`\($0.code)`: \($0.detail)" }.joined(separator: " ")
        var headers: [String: JSONValue] = [:]
        let header = { (description: String, required: Bool) in
            JSONValue.object(["description": .string(description), "required": .bool(required),
                              "schema": .object(["type": .string("string")])])
        }
        if status == 429 {
            if limited { description += " The limits of this operation and their defaults are in x-rate-limits; each app may override them." }
            headers["Retry-After"] = header("Seconds until one more request fits.", true)
            headers["RateLimit-Policy"] = header("The limits looked at, e.g. \"sign_in_per_ip\";q=100;w=60.", false)
            headers["RateLimit"] = header("Where each stands, e.g. \"sign_in_per_ip\";r=0;t=42.", false)
        } else if status == 503 {
            headers["Retry-After"] = header("Seconds before a retry makes sense.", true)
        }
        let schema: JSONValue = .object(["allOf": .array([
            .object(["$ref": .string("#/components/schemas/Problem")]),
            .object(["properties": .object(["status": .object(["const": JSONValue(status)]),
                                            "code": .object(["enum": JSONValue(codes)])])]),
        ])])
        var response: [String: JSONValue] = [
            "description": .string(description),
            "x-error-codes": JSONValue(codes),
            "content": .object(["application/problem+json": .object(["schema": schema])]),
        ]
        if !headers.isEmpty { response["headers"] = .object(headers) }
        return .object(response)
    }
}

extension RouteLimit.Subject {
    var documented: String {
        switch self {
        case .clientIP: "client IP"
        case .bodyField(let fields): fields.map { "body.\($0)" }.joined(separator: " or ")
        case .user: "user"
        case .app: "app"
        }
    }
}
