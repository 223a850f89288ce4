import XCTest
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@testable import IdentityClient

/// problem+json into IdentityError, and the small pure parts (SHA-256, magic links, timestamps).
final class ErrorDecodingTests: XCTestCase {
    func client() -> IdentityClient {
        IdentityClient(baseURL: URL(string: "https://id.example.test")!, appKey: "pk_test",
                       storage: InMemoryTokenStorage(), session: StubProtocol.session())
    }

    func signUpError(_ answer: StubProtocol.Stubbed) async throws -> IdentityError {
        StubProtocol.install { _ in answer }
        do {
            _ = try await client().signUp(email: "jane@example.com", password: "x")
        } catch let error as IdentityError {
            return error
        }
        XCTFail("no error")
        throw IdentityClientError.notSignedIn
    }

    func testValidationErrorsCarryTheirFields() async throws {
        let error = try await signUpError(Answers.problem(422, "auth/weak-password",
                                                         errors: [["location": "body.password", "message": "too short"]]))
        XCTAssertEqual(error.status, 422)
        XCTAssertEqual(error.code, .weakPassword)
        XCTAssertEqual(error.fieldErrors, [IdentityError.FieldError(location: "body.password", message: "too short")])
        XCTAssertEqual(error.requestID, "req_1")
        XCTAssertEqual(error.detail, "d")
    }

    func testRateLimitedCarriesRetryAfter() async throws {
        let error = try await signUpError(Answers.problem(429, "auth/rate-limited", headers: ["Retry-After": "17"]))
        XCTAssertEqual(error.code, .rateLimited)
        XCTAssertEqual(error.retryAfter, 17)
    }

    func testAnUnknownCodeIsKeptVerbatim() async throws {
        let error = try await signUpError(Answers.problem(409, "auth/something-new"))
        XCTAssertEqual(error.code, .unknown("auth/something-new"))
        XCTAssertEqual(error.code.rawValue, "auth/something-new")
    }

    func testEveryKnownCodeRoundTrips() {
        for raw in ["auth/validation-failed", "auth/invalid-credential", "auth/refresh-token-revoked",
                    "auth/account-exists-with-different-credential", "auth/rate-limited", "auth/reauth-required"] {
            let code = IdentityError.Code(rawValue: raw)
            if case .unknown = code { XCTFail("\(raw) not in the catalogue") }
            XCTAssertEqual(code.rawValue, raw)
        }
    }

    func testANonProblemAnswerStillGivesItsStatus() async throws {
        let error = try await signUpError(StubProtocol.Stubbed(status: 502, headers: ["Content-Type": "text/html"],
                                                               body: Data("<html>bad gateway</html>".utf8)))
        XCTAssertEqual(error.status, 502)
        XCTAssertEqual(error.code, .unknown("http/502"))
    }

    func testPortableSHA256MatchesFIPSVectors() {
        XCTAssertEqual(NonceDigest.portable(Array("abc".utf8)).map { String(format: "%02x", $0) }.joined(),
                       "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        XCTAssertEqual(NonceDigest.portable([]).map { String(format: "%02x", $0) }.joined(),
                       "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        let long = Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8)
        XCTAssertEqual(NonceDigest.portable(long).map { String(format: "%02x", $0) }.joined(),
                       "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
        XCTAssertEqual(NonceDigest.hex(Data("abc".utf8)), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    }

    func testMagicLinkParsing() {
        let link = URL(string: "https://app.example.com/auth?mode=sign_in&email=jane%2Bx%40example.com&code=123456")!
        let parsed = IdentityClient.magicLink(link)
        XCTAssertEqual(parsed?.email, "jane+x@example.com")
        XCTAssertEqual(parsed?.code, "123456")
        XCTAssertNil(IdentityClient.magicLink(URL(string: "https://app.example.com/auth?mode=reset&email=a@b.c&code=1")!))
        XCTAssertNil(IdentityClient.magicLink(URL(string: "https://app.example.com/auth?mode=sign_in&email=a@b.c")!))
    }

    func testTimestampsWithMicrosecondsAndWithout() {
        let withMicros = Timestamps.parse("2026-09-27T10:15:00.250000Z")
        let without = Timestamps.parse("2026-09-27T10:15:00Z")
        XCTAssertNotNil(without)
        XCTAssertEqual(withMicros!.timeIntervalSince(without!), 0.25, accuracy: 1e-6)
        XCTAssertNil(Timestamps.parse("yesterday"))
    }

    func testFileStorageKeepsValuesPrivately() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(UUID().uuidString)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let url = directory.appendingPathComponent("session.json")
        let storage = FileTokenStorage(url: url)
        try await storage.write("a", value: "1")
        try await storage.write("b", value: "2")
        try await storage.delete("a")
        let reopened = FileTokenStorage(url: url)
        let a = try await reopened.read("a")
        let b = try await reopened.read("b")
        XCTAssertNil(a)
        XCTAssertEqual(b, "2")
        let mode = try FileManager.default.attributesOfItem(atPath: url.path)[.posixPermissions] as? Int
        XCTAssertEqual(mode, 0o600)
    }
}
