import Foundation
import XCTest
@testable import IdentityKit

/// What an auth hook may answer (`AuthHook.parseAnswer`): the schema per kind, unknown fields
/// refused, sizes bounded, claims held to the custom claims' rules.
final class AuthHookAnswerTests: XCTestCase {
    private func parse(_ text: String, _ kind: AuthHook.Kind) -> Result<AuthHook.Answer, AuthHook.BadAnswer> {
        AuthHook.parseAnswer(Data(text.utf8), kind: kind)
    }

    func testAllowAndRefuse() {
        XCTAssertEqual(try parse(#"{"action":"allow"}"#, .beforeSignUp).get(), .allow(appMetadata: nil, claims: [:]))
        XCTAssertEqual(try parse(#"{"action":"allow","app_metadata":{"plan":"pro"}}"#, .beforeSignUp).get(),
                       .allow(appMetadata: .object(["plan": .string("pro")]), claims: [:]))
        XCTAssertEqual(try parse(#"{"action":"allow","claims":{"tier":"gold"}}"#, .beforeToken).get(),
                       .allow(appMetadata: nil, claims: ["tier": .string("gold")]))
        XCTAssertEqual(try parse(#"{"action":"refuse","message":"No."}"#, .beforeToken).get(), .refuse(message: "No."))
        XCTAssertEqual(try parse(#"{"action":"refuse"}"#, .beforeSignUp).get(),
                       .refuse(message: "The app refused this request."))
        XCTAssertEqual(try parse("{}", .sendEmail).get(), .sent)
        XCTAssertEqual(try parse(#"{"action":"sent"}"#, .sendSms).get(), .sent)
    }

    func testBadAnswers() {
        let bad: [(String, AuthHook.Kind)] = [
            ("not json", .beforeToken), ("[]", .beforeToken), ("{}", .beforeToken),
            (#"{"action":"maybe"}"#, .beforeSignUp),
            (#"{"action":"allow","extra":1}"#, .beforeSignUp),
            (#"{"action":"allow","claims":{"a":1}}"#, .beforeSignUp),        // claims belong to before_token
            (#"{"action":"allow","app_metadata":{}}"#, .beforeToken),        // app_metadata to before_sign_up
            (#"{"action":"allow","claims":{"sub":"x"}}"#, .beforeToken),     // reserved
            (#"{"action":"allow","claims":{"":1}}"#, .beforeToken),
            (#"{"action":"allow","claims":[1]}"#, .beforeToken),
            (#"{"action":"allow","app_metadata":"x"}"#, .beforeSignUp),
            (#"{"action":"refuse","message":""}"#, .beforeSignUp),
            (#"{"action":"refuse","message":3}"#, .beforeSignUp),
            (#"{"action":"refuse","claims":{"a":1}}"#, .beforeToken),
            (#"{"action":"allow","message":"hi"}"#, .beforeToken),
            (#"{"action":"refuse"}"#, .sendEmail),
            (#"{"sent":true}"#, .sendSms),
        ]
        for (text, kind) in bad {
            if case .success(let answer) = parse(text, kind) { XCTFail("\(text) for \(kind) taken as \(answer)") }
        }
    }

    func testSizes() {
        let big = #"{"action":"allow","app_metadata":{"a":""# + String(repeating: "x", count: 9000) + #""}}"#
        XCTAssertThrowsError(try parse(big, .beforeSignUp).get())
        let huge = #"{"action":"allow","x":""# + String(repeating: "x", count: 17 * 1024) + #""}"#
        XCTAssertEqual(parse(huge, .beforeSignUp), .failure(.init("answer larger than 16 KiB")))
        let longMessage = #"{"action":"refuse","message":""# + String(repeating: "m", count: 501) + #""}"#
        XCTAssertThrowsError(try parse(longMessage, .beforeToken).get())
        let claims = #"{"action":"allow","claims":{"a":""# + String(repeating: "c", count: 1100) + #""}}"#
        XCTAssertThrowsError(try parse(claims, .beforeToken).get())
    }

    func testMergedClaimsKeepTheCustomClaimsRules() {
        XCTAssertEqual(AuthHook.mergedClaims(["a": .number(1)], ["a": .number(2), "b": .bool(true)]),
                       ["a": .number(2), "b": .bool(true)])
        let half = String(repeating: "x", count: 600)
        XCTAssertNil(AuthHook.mergedClaims(["a": .string(half)], ["b": .string(half)]))
    }

    func testURLRules() {
        let strict = OutboundAddressPolicy()
        XCTAssertNil(AuthHook.urlProblem("https://api.example.com/hooks", policy: strict))
        XCTAssertNotNil(AuthHook.urlProblem("http://api.example.com/hooks", policy: strict))
        XCTAssertNotNil(AuthHook.urlProblem("https://127.0.0.1/hooks", policy: strict))
        XCTAssertNotNil(AuthHook.urlProblem("https://user:pw@api.example.com/hooks", policy: strict))
        XCTAssertNotNil(AuthHook.urlProblem("https://api.example.com/" + String(repeating: "p", count: 2050), policy: strict))
    }
}
