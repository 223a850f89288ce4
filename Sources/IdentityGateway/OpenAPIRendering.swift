import Foundation
import IdentityKit

/// The served OpenAPI document is `OpenAPIDocument.json` (operations, bodies, success answers)
/// plus what the route table declares, so the two cannot drift:
/// - every error answer of each operation, one response per status: the pipeline's errors for
///   a route of its kind (`Gateway.pipelineErrors`) and the route's own `errors`. Each is
///   problem+json whose schema pins `status` and enumerates the `code`s (also listed as
///   `x-error-codes`, and with their meaning in the description);
/// - each rate-limited operation's `x-rate-limits` (names and defaults) and its 429's headers;
/// - `X-Request-Id` on every answer of every operation.
extension OpenAPIDocument {
    static func rendered(routes: [Route]) -> Data {
        guard case .object(var document)? = JSONValue.parse(Data(json.utf8), maximumBytes: 1 << 20),
              case .object(var paths)? = document["paths"] else {
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
        if case .object(var components)? = document["components"], let shared = components["responses"] {
            components["responses"] = withRequestId(shared)
            document["components"] = .object(components)
        }
        return Data(JSONValue.object(document).serialized.utf8)
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
