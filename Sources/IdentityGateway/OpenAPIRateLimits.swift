import Foundation
import IdentityKit

/// The served OpenAPI document is `OpenAPIDocument.json` plus what the route table declares
/// about rate limits: each limited operation gets a 429 answer and `x-rate-limits` naming its
/// limits and their defaults, so the document cannot drift from the routes.
extension OpenAPIDocument {
    static func rendered(limitsOf routes: [Route]) -> Data {
        guard case .object(var document)? = JSONValue.parse(Data(json.utf8), maximumBytes: 1 << 20),
              case .object(var paths)? = document["paths"],
              case .object(var components)? = document["components"],
              case .object(var responses)? = components["responses"] ?? .object([:]) else {
            return Data(json.utf8)
        }
        for route in routes where !route.limits.isEmpty {
            let method = route.method.lowercased()
            guard case .object(var item)? = paths[route.pattern], case .object(var operation)? = item[method] else {
                continue
            }
            var answers: [String: JSONValue] = [:]
            if case .object(let existing)? = operation["responses"] { answers = existing }
            answers["429"] = .object(["$ref": .string("#/components/responses/RateLimited")])
            operation["responses"] = .object(answers)
            operation["x-rate-limits"] = .array(route.limits.map {
                .string("\($0.policy.name): \($0.policy.count) per \(Int($0.policy.window)) s per \($0.subject.documented)")
            })
            item[method] = .object(operation)
            paths[route.pattern] = .object(item)
        }
        let header = { (description: String) in
            JSONValue.object(["description": .string(description), "schema": .object(["type": .string("string")])])
        }
        responses["RateLimited"] = .object([
            "description": .string("auth/rate-limited: a limit of this operation is spent (defaults in x-rate-limits; "
                                   + "each app may override them)."),
            "headers": .object([
                "Retry-After": header("Seconds until one more request fits."),
                "RateLimit-Policy": header("The limits looked at, e.g. \"sign_in_per_ip\";q=100;w=60."),
                "RateLimit": header("Where each stands, e.g. \"sign_in_per_ip\";r=0;t=42."),
            ]),
            "content": .object(["application/problem+json": .object([
                "schema": .object(["$ref": .string("#/components/schemas/Problem")])])]),
        ])
        components["responses"] = .object(responses)
        document["components"] = .object(components)
        document["paths"] = .object(paths)
        return Data(JSONValue.object(document).serialized.utf8)
    }
}

extension RouteLimit.Subject {
    var documented: String {
        switch self {
        case .clientIP: "client IP"
        case .bodyField(let fields): fields.map { "body.\($0)" }.joined(separator: " or ")
        case .user: "user"
        }
    }
}
