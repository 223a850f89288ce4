// Passkeys and Sign in with Apple through Apple's AuthenticationServices: the system sheet, and
// its result turned into the client's own passkey and Apple calls. Apple platforms only (the
// framework does not exist elsewhere; the platform passkey provider is iOS 15 and macOS 12 on).
#if canImport(AuthenticationServices) && (os(iOS) || os(macOS) || os(visionOS))
import AuthenticationServices
import Foundation

@available(iOS 15.0, macOS 12.0, *)
extension IdentityClient {
    // MARK: - One call each: options, the system sheet, the service

    /// Signs in with a passkey: asks the service for options, shows the system's passkey sheet
    /// over `anchor` (the window), and verifies the assertion. Without `identifier` the sheet
    /// offers every passkey of the app's domain (discoverable credentials).
    ///
    /// Throws `ASAuthorizationError` `.canceled` when the user closes the sheet, and the
    /// service's ``IdentityError`` (`.invalidCredential`, ...) for a refused assertion.
    @MainActor
    public func signInWithPasskey(identifier: String? = nil, anchor: ASPresentationAnchor,
                                  upgradeGuest: Bool = false) async throws -> SignInResult {
        let options = try await passkeySignInOptions(identifier: identifier)
        guard let flowID = options.flowID else {
            throw IdentityClientError.invalidResponse(status: 200, body: "passkey options without flow_id")
        }
        let request = try IdentityClient.passkeyAssertionRequest(options)
        guard case .passkeyAssertion(let assertion) = try await AuthorizationSheet(anchor: anchor).present(request) else {
            throw IdentityClientError.unexpectedCredential("passkey assertion")
        }
        return try await signInWithPasskey(flowID: flowID, assertion: assertion, upgradeGuest: upgradeGuest)
    }

    /// Creates a passkey for the signed-in user with the system's sheet over `anchor`, and
    /// registers it; returns the stored passkey.
    @MainActor
    public func registerPasskey(name: String? = nil, anchor: ASPresentationAnchor) async throws -> Passkey {
        let request = try IdentityClient.passkeyRegistrationRequest(try await passkeyRegistrationOptions())
        guard case .passkeyRegistration(let registration) = try await AuthorizationSheet(anchor: anchor).present(request) else {
            throw IdentityClientError.unexpectedCredential("passkey registration")
        }
        return try await registerPasskey(registration, name: name)
    }

    /// Sign in with Apple: a fresh nonce from the service, Apple's sheet over `anchor` with the
    /// nonce's SHA-256, then the identity token (and the name, which Apple gives only the first
    /// time) to the service.
    @MainActor
    public func signInWithApple(anchor: ASPresentationAnchor,
                                scopes: [ASAuthorization.Scope] = [.fullName, .email],
                                upgradeGuest: Bool = true) async throws -> SignInResult {
        let nonce = try await appleNonce()
        let request = IdentityClient.appleIDRequest(nonce: nonce, scopes: scopes)
        guard case .apple(let apple) = try await AuthorizationSheet(anchor: anchor).present(request) else {
            throw IdentityClientError.unexpectedCredential("Apple ID credential")
        }
        return try await signInWithApple(apple, nonce: nonce, upgradeGuest: upgradeGuest)
    }

    // MARK: - The pieces, for apps that run the controller themselves (SwiftUI's SignInWithAppleButton)

    /// The platform request for a passkey sign-in with these options (from
    /// ``passkeySignInOptions(identifier:)``).
    public static func passkeyAssertionRequest(_ options: PasskeyOptions) throws
        -> ASAuthorizationPlatformPublicKeyCredentialAssertionRequest {
        guard let relyingParty = options.relyingPartyID else {
            throw IdentityClientError.invalidResponse(status: 200, body: "passkey options without rpId")
        }
        let provider = ASAuthorizationPlatformPublicKeyCredentialProvider(relyingPartyIdentifier: relyingParty)
        let request = provider.createCredentialAssertionRequest(challenge: options.challenge)
        request.allowedCredentials = options.allowedCredentialIDs.map {
            ASAuthorizationPlatformPublicKeyCredentialDescriptor(credentialID: $0)
        }
        if let preference = userVerificationPreference(options.userVerification) {
            request.userVerificationPreference = preference
        }
        return request
    }

    /// The platform request to create a passkey with these options (from
    /// ``passkeyRegistrationOptions()``).
    public static func passkeyRegistrationRequest(_ options: PasskeyOptions) throws
        -> ASAuthorizationPlatformPublicKeyCredentialRegistrationRequest {
        guard let relyingParty = options.relyingPartyID, let userID = options.userID, let userName = options.userName else {
            throw IdentityClientError.invalidResponse(status: 200, body: "passkey options without rp, user id or user name")
        }
        let provider = ASAuthorizationPlatformPublicKeyCredentialProvider(relyingPartyIdentifier: relyingParty)
        let request = provider.createCredentialRegistrationRequest(challenge: options.challenge, name: userName, userID: userID)
        if let preference = userVerificationPreference(options.userVerification) {
            request.userVerificationPreference = preference
        }
        return request
    }

    /// The Apple ID request carrying the SHA-256 of a nonce from ``appleNonce()``.
    public static func appleIDRequest(nonce: AppleNonce, scopes: [ASAuthorization.Scope] = [.fullName, .email])
        -> ASAuthorizationAppleIDRequest {
        let request = ASAuthorizationAppleIDProvider().createRequest()
        request.requestedScopes = scopes
        request.nonce = nonce.sha256
        return request
    }

    /// Finishes a passkey sign-in with the `ASAuthorization` the controller gave for
    /// ``passkeyAssertionRequest(_:)`` (`flowID`: the options' ``PasskeyOptions/flowID``).
    @MainActor  // where the controller answers: the authorization is read there, not sent elsewhere
    public func signInWithPasskey(flowID: String, authorization: ASAuthorization,
                                  upgradeGuest: Bool = false) async throws -> SignInResult {
        guard case .passkeyAssertion(let assertion) = try PlatformCredential(authorization) else {
            throw IdentityClientError.unexpectedCredential("passkey assertion")
        }
        return try await signInWithPasskey(flowID: flowID, assertion: assertion, upgradeGuest: upgradeGuest)
    }

    /// Registers the passkey of the `ASAuthorization` the controller gave for
    /// ``passkeyRegistrationRequest(_:)``.
    @MainActor
    public func registerPasskey(authorization: ASAuthorization, name: String? = nil) async throws -> Passkey {
        guard case .passkeyRegistration(let registration) = try PlatformCredential(authorization) else {
            throw IdentityClientError.unexpectedCredential("passkey registration")
        }
        return try await registerPasskey(registration, name: name)
    }

    /// Signs in with the `ASAuthorization` of an Apple ID request made with ``appleIDRequest(nonce:scopes:)``
    /// (or SwiftUI's `SignInWithAppleButton` whose request got `nonce.sha256`).
    @MainActor
    public func signInWithApple(authorization: ASAuthorization, nonce: AppleNonce,
                                upgradeGuest: Bool = true) async throws -> SignInResult {
        guard case .apple(let apple) = try PlatformCredential(authorization) else {
            throw IdentityClientError.unexpectedCredential("Apple ID credential")
        }
        return try await signInWithApple(apple, nonce: nonce, upgradeGuest: upgradeGuest)
    }

    private func signInWithApple(_ apple: PlatformCredential.Apple, nonce: AppleNonce,
                                 upgradeGuest: Bool) async throws -> SignInResult {
        try await signInWithApple(identityToken: apple.identityToken, authorizationCode: apple.authorizationCode,
                                  nonce: nonce.value, firstName: apple.givenName, lastName: apple.familyName,
                                  upgradeGuest: upgradeGuest)
    }

    private static func userVerificationPreference(_ value: String?)
        -> ASAuthorizationPublicKeyCredentialUserVerificationPreference? {
        switch value {
        case "required": .required
        case "preferred": .preferred
        case "discouraged": .discouraged
        default: nil
        }
    }
}

/// What an `ASAuthorization` carries, as `Sendable` values the client's calls take.
@available(iOS 15.0, macOS 12.0, *)
enum PlatformCredential: Sendable {
    struct Apple: Sendable {
        let identityToken: String
        let authorizationCode: String?
        let givenName: String?
        let familyName: String?
    }

    case passkeyAssertion(PasskeyAssertion)
    case passkeyRegistration(PasskeyRegistration)
    case apple(Apple)

    init(_ authorization: ASAuthorization) throws {
        switch authorization.credential {
        case let credential as ASAuthorizationPlatformPublicKeyCredentialAssertion:
            guard let authenticatorData = credential.rawAuthenticatorData, let signature = credential.signature else {
                throw IdentityClientError.unexpectedCredential("passkey assertion without authenticator data or signature")
            }
            self = .passkeyAssertion(PasskeyAssertion(credentialID: credential.credentialID,
                                                      clientDataJSON: credential.rawClientDataJSON,
                                                      authenticatorData: authenticatorData, signature: signature,
                                                      userHandle: credential.userID))
        case let credential as ASAuthorizationPlatformPublicKeyCredentialRegistration:
            guard let attestationObject = credential.rawAttestationObject else {
                throw IdentityClientError.unexpectedCredential("passkey registration without attestation object")
            }
            // Platform passkeys live on this device and sync through iCloud Keychain; other
            // devices use them over the hybrid transport (what Safari reports for them).
            self = .passkeyRegistration(PasskeyRegistration(credentialID: credential.credentialID,
                                                            clientDataJSON: credential.rawClientDataJSON,
                                                            attestationObject: attestationObject,
                                                            transports: ["hybrid", "internal"]))
        case let credential as ASAuthorizationAppleIDCredential:
            guard let token = credential.identityToken.map({ String(decoding: $0, as: UTF8.self) }) else {
                throw IdentityClientError.unexpectedCredential("Apple ID credential without identity token")
            }
            self = .apple(Apple(identityToken: token,
                                authorizationCode: credential.authorizationCode.map { String(decoding: $0, as: UTF8.self) },
                                givenName: credential.fullName?.givenName, familyName: credential.fullName?.familyName))
        default:
            throw IdentityClientError.unexpectedCredential(String(describing: type(of: authorization.credential)))
        }
    }
}

/// One run of `ASAuthorizationController` as an `async` call. The controller holds its
/// delegate weakly, so the sheet keeps itself alive until the controller answers.
@available(iOS 15.0, macOS 12.0, *)
@MainActor
private final class AuthorizationSheet: NSObject {
    private let anchor: ASPresentationAnchor
    private var controller: ASAuthorizationController?
    private var continuation: CheckedContinuation<PlatformCredential, Error>?
    private var keepAlive: AuthorizationSheet?

    init(anchor: ASPresentationAnchor) {
        self.anchor = anchor
    }

    func present(_ request: ASAuthorizationRequest) async throws -> PlatformCredential {
        try await withCheckedThrowingContinuation { continuation in
            self.continuation = continuation
            let controller = ASAuthorizationController(authorizationRequests: [request])
            controller.delegate = self
            controller.presentationContextProvider = self
            self.controller = controller
            keepAlive = self
            controller.performRequests()
        }
    }

    fileprivate func finish(_ result: Result<PlatformCredential, Error>) {
        continuation?.resume(with: result)
        continuation = nil
        controller = nil
        keepAlive = nil
    }
}

// AuthenticationServices calls its delegate on the main thread; `@preconcurrency` states it
// for SDKs whose protocols do not say so yet.
@available(iOS 15.0, macOS 12.0, *)
extension AuthorizationSheet: @preconcurrency ASAuthorizationControllerDelegate {
    func authorizationController(controller: ASAuthorizationController,
                                 didCompleteWithAuthorization authorization: ASAuthorization) {
        finish(Result { try PlatformCredential(authorization) })
    }

    func authorizationController(controller: ASAuthorizationController, didCompleteWithError error: Error) {
        finish(.failure(error))
    }
}

@available(iOS 15.0, macOS 12.0, *)
extension AuthorizationSheet: @preconcurrency ASAuthorizationControllerPresentationContextProviding {
    func presentationAnchor(for controller: ASAuthorizationController) -> ASPresentationAnchor {
        anchor
    }
}
#endif
