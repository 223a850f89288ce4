import Foundation
import XCTest
import IdentityClient

/// Passkeys through the SDK, with the harness's software authenticator standing in for the
/// platform (real keys, real CBOR): the SDK gets the options and hands over the bytes.
final class PasskeyE2ETests: XCTestCase {
    func testRegisterListSignInDelete() async throws {
        let e2e = try E2E.environment()
        let email = E2E.uniqueEmail("pk")
        let client = e2e.client()
        let user = try await client.signUp(email: email, password: E2E.password).signedInUser()

        let registration = try await client.passkeyRegistrationOptions()
        XCTAssertEqual(registration.relyingPartyID, "sdk.example.test")
        XCTAssertGreaterThanOrEqual(registration.challenge.count, 16)
        let options = try JSONSerialization.jsonObject(with: registration.json)
        let created = try await e2e.helper("passkey/create", ["options": options])
        let response = created["response"] as! [String: Any]
        let credentialID = try XCTUnwrap(Data(base64URL: created["rawId"] as! String))
        let passkey = try await client.registerPasskey(
            PasskeyRegistration(credentialID: credentialID,
                                clientDataJSON: Data(base64URL: response["clientDataJSON"] as! String)!,
                                attestationObject: Data(base64URL: response["attestationObject"] as! String)!,
                                transports: response["transports"] as? [String] ?? []),
            name: "Test key")
        XCTAssertEqual(passkey.name, "Test key")
        let listed = try await client.passkeys()
        XCTAssertEqual(listed.map(\.id), [passkey.id])

        let other = e2e.client()
        let signIn = try await other.passkeySignInOptions(identifier: email)
        XCTAssertTrue(signIn.hasPasskeys)
        let flowID = try XCTUnwrap(signIn.flowID)
        let assertion = try await e2e.helper("passkey/get", ["options": try JSONSerialization.jsonObject(with: signIn.json),
                                                              "credential_id": created["id"] as! String])
        let assertionResponse = assertion["response"] as! [String: Any]
        let signedIn = try await other.signInWithPasskey(flowID: flowID, assertion: PasskeyAssertion(
            credentialID: credentialID,
            clientDataJSON: Data(base64URL: assertionResponse["clientDataJSON"] as! String)!,
            authenticatorData: Data(base64URL: assertionResponse["authenticatorData"] as! String)!,
            signature: Data(base64URL: assertionResponse["signature"] as! String)!,
            userHandle: (assertionResponse["userHandle"] as? String).flatMap { Data(base64URL: $0) }))
        XCTAssertEqual(try signedIn.signedInUser().uid, user.uid)

        let unknown = try await e2e.client().passkeySignInOptions(identifier: E2E.uniqueEmail("nobody"))
        XCTAssertFalse(unknown.hasPasskeys)

        try await client.deletePasskey(id: passkey.id)
        let none = try await client.passkeys()
        XCTAssertEqual(none, [])
    }
}

extension Data {
    init?(base64URL text: String) {
        var s = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        s += String(repeating: "=", count: (4 - s.count % 4) % 4)
        self.init(base64Encoded: s)
    }
}
