import Foundation
import IdentityKit

/// Reads a JSON object body field by field, collecting every problem with its location
/// (`body.email`) so one 422 names them all. Unknown fields are ignored.
struct BodyReader {
    private let object: [String: JSONValue]
    private(set) var problems: [ServiceError.FieldProblem] = []

    /// The body the pipeline parsed (routes that take one), else parsed here.
    init(_ context: RouteContext) throws {
        try self.init(parsed: try context.json ?? Self.parse(context.request.body))
    }

    /// Parses a body: not JSON → 400; JSON with a string that is not Unicode text (invalid
    /// UTF-8, a lone surrogate) → 422, as a NUL is: refused, never cut or replaced. The strict
    /// parser (`JSONParser`: linear time, depth 32, duplicate keys refused) also gets the body
    /// cap (the import route's is larger), so a caller that skips HTTPServer's check still
    /// cannot hand it more.
    static func parse(_ body: Data, maximumBytes: Int = HTTPServer.maximumBody) throws -> JSONValue {
        switch JSONValue.parseBody(body, maximumBytes: maximumBytes) {
        case .value(let value):
            return value
        case .invalidUnicode:
            throw ServiceError.validationFailed([.init(location: "body",
                                                       message: "strings must be valid UTF-8 text (no lone surrogates)")])
        case .malformed:
            throw ServiceError.invalidJSON
        }
    }

    /// JSON but not an object → 422.
    init(parsed value: JSONValue) throws {
        guard case .object(let object) = value else {
            throw ServiceError.validationFailed([.init(location: "body", message: "must be a JSON object")])
        }
        self.object = object
    }

    /// A body that may be absent (DELETE /v1/me): empty reads as `{}`.
    init(optional body: Data) throws {
        let blank = body.allSatisfy { $0 == 32 || $0 == 10 || $0 == 13 || $0 == 9 }
        try self.init(parsed: blank ? .object([:]) : try Self.parse(body))
    }

    mutating func requiredString(_ key: String) -> String? {
        switch object[key] {
        case .string(let value):
            return refusingNUL(value, key)
        case nil, .null?:
            problems.append(.init(location: "body.\(key)", message: "is required"))
        default:
            problems.append(.init(location: "body.\(key)", message: "must be a string"))
        }
        return nil
    }

    /// A required JSON object (a WebAuthn `PublicKeyCredential`, say), kept whole.
    mutating func requiredObject(_ key: String) -> JSONValue? {
        switch object[key] {
        case .object(let value)?:
            return .object(value)
        case nil, .null?:
            problems.append(.init(location: "body.\(key)", message: "is required"))
        default:
            problems.append(.init(location: "body.\(key)", message: "must be an object"))
        }
        return nil
    }

    /// A field that may be absent (`.absent`), null (`.null`) or a string (`.value`).
    enum Optional: Equatable {
        case absent, null, value(String)

        var string: String? {
            if case .value(let value) = self { return value }
            return nil
        }
    }

    /// `maxLength` counts characters as JSON Schema's `maxLength` does (Unicode scalars, the
    /// limit the OpenAPI document states), not Swift's grapheme clusters: `"e\u{301}"` is two.
    mutating func optionalString(_ key: String, maxLength: Int = 256,
                                 validate: ((String) -> String?)? = nil) -> Optional {
        switch object[key] {
        case nil: return .absent
        case .null?: return .null
        case .string(let value)?:
            guard refusingNUL(value, key) != nil else { return .absent }
            if value.unicodeScalars.count > maxLength {
                problems.append(.init(location: "body.\(key)", message: "must be at most \(maxLength) characters"))
            } else if let problem = validate?(value) {
                problems.append(.init(location: "body.\(key)", message: problem))
            }
            return .value(value)
        default:
            problems.append(.init(location: "body.\(key)", message: "must be a string"))
            return .absent
        }
    }

    /// An optional integer within `range` (absent or null: nil).
    mutating func optionalInteger(_ key: String, in range: ClosedRange<Int>) -> Int? {
        switch object[key] {
        case nil, .null?: return nil
        case .number(let value)? where value.rounded() == value && Double(range.lowerBound) <= value
                                      && value <= Double(range.upperBound):
            return Int(value)
        default:
            problems.append(.init(location: "body.\(key)",
                                  message: DeclaredBounds.message(range)))
            return nil
        }
    }

    /// An optional boolean (absent or null: nil).
    mutating func optionalBool(_ key: String) -> Bool? {
        switch object[key] {
        case nil, .null?: return nil
        case .bool(let value)?: return value
        default:
            problems.append(.init(location: "body.\(key)", message: "must be true or false"))
            return nil
        }
    }

    /// The raw value of a field, for callers with rules of their own (metadata objects).
    func value(_ key: String) -> JSONValue? { object[key] }

    /// A NUL character is refused, never cut: C layers below (libpq) would end the string
    /// there, so `"jane@example.com\u0000x"` would mean jane to them and something else here.
    private mutating func refusingNUL(_ value: String, _ key: String) -> String? {
        guard value.utf8.contains(0) else { return value }
        problems.append(.init(location: "body.\(key)", message: "must not contain NUL characters"))
        return nil
    }

    /// Records a problem found by the caller's own rule (a field that depends on another).
    mutating func add(_ problem: ServiceError.FieldProblem) { problems.append(problem) }

    /// Throws a 422 naming every problem found so far.
    func finish() throws {
        if !problems.isEmpty { throw ServiceError.validationFailed(problems) }
    }
}
