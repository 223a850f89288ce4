import Foundation
import XCTest
@testable import IdentityGateway
@testable import IdentityKit

/// The parts of the client-profile edges that decide on their own, without a store or a worker:
/// what counts as a host, an origin, a path prefix, the session cookie, and the single-token
/// error table (docs/client-profiles.md, "Profiles").
final class ClientEdgeTests: XCTestCase {
    func testHostsAreLowerCasedHostOrHostPort() {
        XCTAssertEqual(ClientProfile.normalizedHost("Auth.Example.COM"), "auth.example.com")
        XCTAssertEqual(ClientProfile.normalizedHost("localhost:3100"), "localhost:3100")
        for bad in ["", "a:b", "a:0", "a:70000", "a/b", "a b", "a:1:2", "évil.example", ":80", "a@b"] {
            XCTAssertNil(ClientProfile.normalizedHost(bad), bad)
        }
        // Decided on bytes when plain, by the general rules otherwise: the same answers.
        XCTAssertEqual(ClientProfile.normalizedHost(" Auth.Example.COM:8443 "), "auth.example.com:8443")
        XCTAssertEqual(ClientProfile.normalizedHost("A-1.example:080"), "a-1.example:080")
        for bad in ["a:", "a::1", "a:-1", "a:+80x", "-:65536", "\u{0130}.example"] {
            XCTAssertNil(ClientProfile.normalizedHost(bad), bad)
        }
        XCTAssertNil(ClientProfile.normalizedHost(String(repeating: "a", count: 261)))
        XCTAssertNotNil(ClientProfile.normalizedHost(String(repeating: "a", count: 260)))
    }

    func testMediaTypesAreTheFirstPartTrimmedAndLowerCased() {
        XCTAssertEqual(Gateway.mediaType("Application/X-WWW-Form-URLEncoded; charset=UTF-8"), "application/x-www-form-urlencoded")
        XCTAssertEqual(Gateway.mediaType(" \tapplication/json \t;q=1"), "application/json")
        XCTAssertEqual(Gateway.mediaType(";;Text/Plain"), "text/plain")
        XCTAssertEqual(Gateway.mediaType("application/json\n"), "application/json\n")  // a newline is no blank here
        XCTAssertEqual(Gateway.mediaType("Applicatión/JSON"), "applicatión/json")
        for empty in [nil, "", ";", "  ;x"] as [String?] {  // the first non-empty part is blank
            XCTAssertEqual(Gateway.mediaType(empty), "", String(describing: empty))
        }
    }

    func testOriginsAreExactSchemeHostPort() {
        XCTAssertEqual(ClientProfile.normalizedOrigin("https://App.Example.com"), "https://app.example.com")
        XCTAssertEqual(ClientProfile.normalizedOrigin("http://localhost:3000"), "http://localhost:3000")
        for bad in ["*", "null", "https://a.example/path", "ftp://a.example", "https://", "https://a.example:99999",
                    "https://*.example.com"] {
            XCTAssertNil(ClientProfile.normalizedOrigin(bad), bad)
        }
    }

    /// A browser page reads only the answer headers CORS exposes: every header a rate-limited
    /// or refused answer carries must be among them (they once named RateLimit-Remaining and
    /// friends, which the service never sends, so a page could read no rate limit at all).
    func testExposedHeadersAreTheOnesTheServiceSends() {
        let exposed = Set(ClientEdge.exposedHeaders.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).lowercased() })
        let limits = RateLimitHeaders(policy: "\"sign_up_per_ip\";q=20;w=3600", state: "\"sign_up_per_ip\";r=19;t=3600")
        let refused = HTTPResponse.problem(.rateLimited(retryAfter: 30), requestId: "req_1")
        for name in limits.pairs.map(\.0) + refused.headers.map(\.0)
            where !["content-type", "content-length", "cache-control", "x-content-type-options"].contains(name.lowercased()) {
            XCTAssertTrue(exposed.contains(name.lowercased()), "\(name) is sent but not exposed: \(ClientEdge.exposedHeaders)")
        }
        XCTAssertTrue(exposed.isSuperset(of: ["x-request-id", "retry-after", "ratelimit-policy", "ratelimit"]), "\(exposed)")
    }

    func testPathPrefixesStayOutOfTheServicesOwnPaths() {
        XCTAssertTrue(ClientProfile.isValidPathPrefix("/api/v2"))
        XCTAssertTrue(ClientProfile.isValidPathPrefix("/auth"))
        for bad in ["", "/", "api/v2", "/api/v2/", "/v1", "/v1/x", "/api/docs", "/api/docs/x", "/.well-known",
                    "/healthz", "/a b", "/a//b"] {
            XCTAssertFalse(ClientProfile.isValidPathPrefix(bad), bad)
        }
        XCTAssertEqual(ClientEdge.strip(prefix: "/api/v2", from: "/api/v2/auth/sign-in"), "/auth/sign-in")
        XCTAssertNil(ClientEdge.strip(prefix: "/api/v2", from: "/api/v20/auth/sign-in"))
        XCTAssertNil(ClientEdge.strip(prefix: "/api/v2", from: "/api/v2"))
    }

    func testSessionCookieIsReadOnlyWhenItHoldsASessionToken() {
        let token = SessionToken.new()
        XCTAssertTrue(token.hasPrefix("st_") && token.count == 46)
        XCTAssertEqual(SessionObjectEdge.sessionCookie("theme=dark; __Host-session=\(token); x=1"), token)
        XCTAssertNil(SessionObjectEdge.sessionCookie("session=\(token)"))
        XCTAssertNil(SessionObjectEdge.sessionCookie("__Host-session=eyJhbGciOi.x.y"))
        XCTAssertNil(SessionObjectEdge.sessionCookie("__Host-session=st_" + String(repeating: "a", count: 200)))
        XCTAssertTrue(SessionObjectEdge.clearedCookie.contains("Max-Age=0"))
    }

    func testSingleTokenErrorsComeFromOneTable() throws {
        let cases: [(ServiceError, String, Int)] = [
            (.validationFailed([]), "VALIDATION_ERROR", 400), (.invalidJSON, "VALIDATION_ERROR", 400),
            (.invalidToken, "UNAUTHORIZED", 401), (.tokenExpired, "UNAUTHORIZED", 401),
            (ProviderErrors.invalidToken("apple"), "INVALID_APPLE_TOKEN", 401),
            (ProviderErrors.invalidToken("google"), "INVALID_GOOGLE_TOKEN", 401),
            (.accountExists, "ACCOUNT_EXISTS", 409), (.reauthRequired, "REAUTH_REQUIRED", 403),
            (.rateLimited(retryAfter: 3), "RATE_LIMITED", 429), (.internal, "INTERNAL_ERROR", 500),
            (.unavailable, "INTERNAL_ERROR", 500),
        ]
        for (error, code, status) in cases {
            let mapped = SingleTokenEdge.error(.problem(error, requestId: "req_1"))
            XCTAssertEqual(mapped.status, status, error.code)
            guard case .value(let body) = JSONValue.parseBody(mapped.body) else { return XCTFail("not JSON") }
            XCTAssertEqual(body["error"]?["code"], .string(code), error.code)
            XCTAssertNotNil(body["error"]?["message"])
        }
        // Retry-After survives the mapping.
        let limited = SingleTokenEdge.error(.problem(.rateLimited(retryAfter: 3), requestId: "req_1"))
        XCTAssertTrue(limited.headers.contains { $0.0 == "Retry-After" && $0.1 == "3" })
    }

    func testSingleTokenUserObject() {
        let core = JSONValue.object(["uid": .string("u1"), "is_guest": .bool(false), "email": .null,
                                     "first_name": .string("Sam"), "last_name": .string("Lee")])
        XCTAssertEqual(SingleTokenEdge.user(core), .object(["id": .string("u1"), "isGuest": .bool(false), "email": .null,
                                                            "name": .string("Sam Lee")]))
    }
}
