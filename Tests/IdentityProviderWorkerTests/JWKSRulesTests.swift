import Foundation
import XCTest
@testable import IdentityKit
@testable import IdentityProviderWorker

/// What the provider worker trusts of a provider's keys, and where from.
final class JWKSRulesTests: XCTestCase {
    func testModulusBitsIgnoreLeadingZeros() {
        XCTAssertEqual(JWKSCache.modulusBits([0x00] + [UInt8](repeating: 0xff, count: 256)), 2048)
        XCTAssertEqual(JWKSCache.modulusBits([UInt8](repeating: 0xff, count: 128)), 1024)
        XCTAssertEqual(JWKSCache.modulusBits([0x01] + [UInt8](repeating: 0, count: 255)), 2041)
        XCTAssertEqual(JWKSCache.modulusBits([0, 0]), 0)
        XCTAssertLessThan(JWKSCache.modulusBits([UInt8](repeating: 0xff, count: 255)), JWKSCache.minimumModulusBits)
        XCTAssertGreaterThanOrEqual(JWKSCache.modulusBits([0x80] + [UInt8](repeating: 0, count: 255)),
                                    JWKSCache.minimumModulusBits)
    }

    func testCachedKeysAreTrustedOnlyUntilTheirMaximumStaleness() {
        let fetched = Date(timeIntervalSince1970: 1_000_000)
        XCTAssertTrue(JWKSCache.trusted(fetchedAt: fetched, now: fetched + 3600, maximumStaleness: 86_400))
        XCTAssertTrue(JWKSCache.trusted(fetchedAt: fetched, now: fetched + 86_400, maximumStaleness: 86_400))
        XCTAssertFalse(JWKSCache.trusted(fetchedAt: fetched, now: fetched + 86_401, maximumStaleness: 86_400))
    }

    func testProviderURLsMustBeHTTPSUnlessTestsAllowPlainHTTP() {
        var strict = EnvironmentReader(["IDENTITY_GOOGLE_JWKS_URL": "http://127.0.0.1:9/keys"])
        _ = strict.providerURL("IDENTITY_GOOGLE_JWKS_URL", default: "https://www.googleapis.com/oauth2/v3/certs")
        XCTAssertEqual(strict.problems.count, 1)
        var defaults = EnvironmentReader([:])
        _ = defaults.providerURL("IDENTITY_GOOGLE_JWKS_URL", default: "https://www.googleapis.com/oauth2/v3/certs")
        XCTAssertEqual(defaults.problems, [])
        var tests = EnvironmentReader(["IDENTITY_GOOGLE_JWKS_URL": "http://127.0.0.1:9/keys",
                                       "IDENTITY_ALLOW_INSECURE_PROVIDER_URLS": "1"])
        XCTAssertEqual(tests.providerURL("IDENTITY_GOOGLE_JWKS_URL", default: "x"), "http://127.0.0.1:9/keys")
        XCTAssertEqual(tests.problems, [])
        var odd = EnvironmentReader(["IDENTITY_APPLE_TOKEN_URL": "file:///etc/passwd",
                                     "IDENTITY_ALLOW_INSECURE_PROVIDER_URLS": "1"])
        _ = odd.providerURL("IDENTITY_APPLE_TOKEN_URL", default: "x")
        XCTAssertEqual(odd.problems.count, 1)
    }
}

/// Whose `email_verified` may link a sign-in to an existing account by email.
final class EmailAuthorityTests: XCTestCase {
    func testGoogleIsAnAuthorityForItsOwnAndHostedDomainsOnly() {
        XCTAssertTrue(IdTokenVerifier.googleIsAuthority(email: "jane@gmail.com", hostedDomain: nil))
        XCTAssertTrue(IdTokenVerifier.googleIsAuthority(email: "Jane@GoogleMail.com", hostedDomain: nil))
        XCTAssertTrue(IdTokenVerifier.googleIsAuthority(email: "jane@corp.example", hostedDomain: "corp.example"))
        XCTAssertTrue(IdTokenVerifier.googleIsAuthority(email: "jane@Corp.Example", hostedDomain: "corp.example"))
        XCTAssertFalse(IdTokenVerifier.googleIsAuthority(email: "jane@example.com", hostedDomain: nil))
        XCTAssertFalse(IdTokenVerifier.googleIsAuthority(email: "jane@example.com", hostedDomain: ""))
        XCTAssertFalse(IdTokenVerifier.googleIsAuthority(email: "jane@example.com", hostedDomain: "corp.example"))
        XCTAssertFalse(IdTokenVerifier.googleIsAuthority(email: "jane@gmail.com.evil.example", hostedDomain: nil))
        XCTAssertFalse(IdTokenVerifier.googleIsAuthority(email: nil, hostedDomain: "corp.example"))
        XCTAssertFalse(IdTokenVerifier.googleIsAuthority(email: "no-at-sign", hostedDomain: nil))
    }
}
