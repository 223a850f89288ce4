import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest
import IdentityClient
import IdentityCredentials

/// What Tests/e2e/test_swift_client.py hands these tests: the gateway, a fresh app, and its
/// helper (mail codes, provider tokens, a software passkey authenticator). Without it, skip.
struct E2E: Sendable {
    let baseURL: URL
    let appKey: String
    let helperURL: URL
    let tapURL: URL
    let refreshGrace: TimeInterval

    static func environment() throws -> E2E {
        let env = ProcessInfo.processInfo.environment
        guard let base = env["IDENTITY_CLIENT_E2E_BASE_URL"].flatMap(URL.init(string:)),
              let key = env["IDENTITY_CLIENT_E2E_APP_KEY"],
              let helper = env["IDENTITY_CLIENT_E2E_HELPER_URL"].flatMap(URL.init(string:)),
              let tap = env["IDENTITY_CLIENT_E2E_TAP_URL"].flatMap(URL.init(string:)) else {
            throw XCTSkip("IDENTITY_CLIENT_E2E_* not set: run through Tests/e2e/test_swift_client.py")
        }
        let grace = env["IDENTITY_CLIENT_E2E_REFRESH_GRACE_SECONDS"].flatMap(TimeInterval.init) ?? 30
        return E2E(baseURL: base, appKey: key, helperURL: helper, tapURL: tap, refreshGrace: grace)
    }

    /// A client of the app, as an app installation (its own storage unless given one).
    func client(storage: any TokenStorage = InMemoryTokenStorage()) -> IdentityClient {
        IdentityClient(baseURL: baseURL, appKey: appKey, storage: storage, session: Tap.plainSession,
                       userAgent: "IdentityClientE2ETests")
    }

    /// A client whose every request goes through the tap (see `Tap`).
    func tappedClient(storage: any TokenStorage = InMemoryTokenStorage()) -> IdentityClient {
        IdentityClient(baseURL: tapURL, appKey: appKey, storage: storage, session: Tap.plainSession,
                       userAgent: "IdentityClientE2ETests")
    }

    /// POSTs `body` to the harness's helper and returns its JSON answer.
    func helper(_ path: String, _ body: [String: Any] = [:]) async throws -> [String: Any] {
        var request = URLRequest(url: helperURL.appendingPathComponent(path))
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.httpBody = try JSONSerialization.data(withJSONObject: body)
        let (data, response) = try await Tap.plainSession.data(for: request)
        let json = try JSONSerialization.jsonObject(with: data) as? [String: Any] ?? [:]
        guard (response as? HTTPURLResponse)?.statusCode == 200 else {
            throw NSError(domain: "helper", code: 1, userInfo: [NSLocalizedDescriptionKey: "\(path): \(json)"])
        }
        return json
    }

    /// Runs `send` (which makes the service mail `email`) and returns the code (and link) of that mail.
    func mailedCode(to email: String, _ send: () async throws -> Void) async throws -> (code: String, link: String?) {
        let mark = try await helper("mail/mark")["mark"] as? Int ?? 0
        try await send()
        let mail = try await helper("mail/code", ["email": email, "after": mark])
        return (mail["code"] as! String, mail["link"] as? String)
    }

    static func uniqueEmail(_ tag: String) -> String {
        "sdk-\(tag)-\(UUID().uuidString.prefix(12).lowercased())@example.com"
    }

    static let password = "correct horse battery staple"
}

/// TOTP codes the way the server's own unit tests make them (IdentityCredentials' RFC 6238 code).
enum Authenticator {
    static func code(secretBase32: String, offsetSteps: Int64 = 0) -> String {
        let now = Int64(Date().timeIntervalSince1970)
        return TOTP.code(secret: base32Decode(secretBase32), step: TOTP.step(at: now) + offsetSteps)
    }

    /// Sleeps past the next 30-second boundary when one is near, so the test and the server
    /// agree on which step is "now".
    static func awayFromStepEdge(margin: Int64 = 4) async throws {
        let into = Int64(Date().timeIntervalSince1970) % TOTP.period
        if into > TOTP.period - margin {
            try await Task.sleep(nanoseconds: UInt64(TOTP.period - into + 1) * 1_000_000_000)
        }
    }

    /// RFC 4648 base32 (no padding), the secret's display form.
    static func base32Decode(_ text: String) -> [UInt8] {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567")
        var buffer = 0, bits = 0
        var out: [UInt8] = []
        for char in text.uppercased() where char != "=" {
            guard let value = alphabet.firstIndex(of: char) else { continue }
            buffer = (buffer << 5) | value
            bits += 5
            if bits >= 8 {
                out.append(UInt8((buffer >> (bits - 8)) & 0xff))
                bits -= 8
            }
        }
        return out
    }
}

/// The tap: a loopback proxy of the harness (Tests/e2e/test_swift_client.py, `Tap`) between a
/// tapped client and the real gateway. Every request is really sent and recorded, and the answer
/// of a chosen request can be thrown away after the service processed it (a connection lost on
/// the way back), which is what the SDK's retry of a refresh exists for. It changes nothing in a
/// request or an answer. (Not a URLProtocol: swift-corelibs-foundation lets a protocol call its
/// client only on the session's private work queue, and crashes under concurrent calls otherwise.)
enum Tap {
    static let plainSession = URLSession(configuration: .ephemeral)

    struct Seen: Sendable {
        let method: String
        let path: String
        let body: Data
    }

    /// Forgets what the tap saw; no answer is lost.
    static func reset(_ e2e: E2E) async throws {
        _ = try await e2e.helper("tap/reset")
    }

    /// Throws away the answers of the next `count` requests to `path` (after they reached the service).
    static func loseAnswers(_ e2e: E2E, to path: String, count: Int = 1) async throws {
        _ = try await e2e.helper("tap/lose", ["path": path, "count": count])
    }

    static func requests(_ e2e: E2E, to path: String) async throws -> [Seen] {
        let seen = try await e2e.helper("tap/requests", ["path": path])["requests"] as? [[String: String]] ?? []
        return seen.map {
            Seen(method: $0["method"] ?? "", path: $0["path"] ?? "", body: Data(base64Encoded: $0["body"] ?? "") ?? Data())
        }
    }
}

extension SignInResult {
    /// The user, failing the test on an MFA challenge.
    func signedInUser(file: StaticString = #filePath, line: UInt = #line) throws -> User {
        guard case .signedIn(let user, _) = self else {
            XCTFail("expected a session, got \(self)", file: file, line: line)
            throw IdentityClientError.notSignedIn
        }
        return user
    }
}

/// Asserts that `body` throws an IdentityError with `code` (and returns it).
@discardableResult
func assertIdentityError<T>(_ code: IdentityError.Code, file: StaticString = #filePath, line: UInt = #line,
                            _ body: () async throws -> T) async -> IdentityError? {
    do {
        let value = try await body()
        XCTFail("expected \(code.rawValue), got \(value)", file: file, line: line)
    } catch let error as IdentityError {
        XCTAssertEqual(error.code, code, "\(error)", file: file, line: line)
        return error
    } catch {
        XCTFail("expected \(code.rawValue), got \(error)", file: file, line: line)
    }
    return nil
}
