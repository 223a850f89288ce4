import Foundation
import IdentityCredentials
import IdentityKit

/// The rules of each provider (docs/api-contract.md, "Sign-in methods"): issuer, audience among the
/// app's configured ids, times, and nonces. Returns who the token says the user is.
struct IdTokenVerifier: Sendable {
    let settings: ProviderSettingsStore
    let nonces: NonceStore
    let apple: JWKSCache
    let google: JWKSCache
    let firebase: JWKSCache

    func verify(_ command: ProviderV1.VerifyIdToken) throws -> ProviderV1.VerifiedIdentity {
        let app = try settings.settings(appId: command.appId)
        let now = Timestamp.nowSeconds()
        switch command.provider {
        case "apple": return try verifyApple(command, app: app, now: now)
        case "google": return try verifyGoogle(command, app: app, now: now)
        case "firebase": return try verifyFirebase(command, app: app, now: now)
        default: throw ServiceError.providerNotConfigured
        }
    }

    /// Apple: the `nonce` claim must be the hex SHA-256 of a raw nonce this service issued to
    /// this app (or, with `apple_nonce` `client`, one the client made, recorded now), unspent
    /// and unexpired (spent later, in the sign-in's transaction); with `none`, a token sent
    /// without a nonce is itself the single-use value.
    private func verifyApple(_ command: ProviderV1.VerifyIdToken, app: ProviderSettings, now: Int64) throws
        -> ProviderV1.VerifiedIdentity {
        guard !app.appleClientIds.isEmpty else { throw ServiceError.providerNotConfigured }
        let invalid = ProviderErrors.invalidToken("apple")
        let token = try ProviderToken(command.idToken, keys: apple, provider: "apple")
        guard token.string("iss") == "https://appleid.apple.com", let audience = token.audience(in: app.appleClientIds),
              token.hasValidTimes(now: now), let subject = token.string("sub")
        else { throw invalid }
        let hash: [UInt8]
        if app.appleNonceOptional, command.nonce?.isEmpty ?? true {
            // `apple_nonce` `none` (seed 003's clients send no nonce): the identity token itself is
            // single use, its hash remembered until it expires and spent in the sign-in's
            // transaction as a nonce would be. Only for apps that chose it.
            guard let expires = token.number("exp") else { throw invalid }
            hash = Digest.sha256("apple-identity-token:" + command.idToken)
            guard try nonces.acceptClientNonce(appId: command.appId, hash: hash, untilEpochSeconds: expires) else { throw invalid }
            return ProviderV1.VerifiedIdentity(provider: "apple", subject: subject, email: token.string("email"),
                                               emailVerified: token.flag("email_verified"), audience: audience,
                                               nonceHash: Hex.encode(hash), emailAuthoritative: token.flag("email_verified"))
        }
        guard let raw = command.nonce, let claimed = token.string("nonce") else { throw invalid }
        hash = Digest.sha256(raw)
        guard Digest.constantTimeEqual(Array(Hex.encode(hash).utf8), Array(claimed.lowercased().utf8)) else { throw invalid }
        if app.appleNonceFromClient {
            // The client made it: remembered from now until the token expires (hasValidTimes
            // wants `exp` in the future), so replaying the token or the nonce finds it spent.
            guard let expires = token.number("exp"), (8...512).contains(raw.utf8.count),
                  try nonces.acceptClientNonce(appId: command.appId, hash: hash, untilEpochSeconds: expires)
            else { throw invalid }
        } else {
            guard try nonces.isUsable(appId: command.appId, hash: hash) else { throw invalid }
        }
        // Apple relays or owns every address it reports: an authority for all of them.
        return ProviderV1.VerifiedIdentity(provider: "apple", subject: subject, email: token.string("email"),
                                           emailVerified: token.flag("email_verified"), audience: audience,
                                           nonceHash: Hex.encode(hash), emailAuthoritative: token.flag("email_verified"))
    }

    /// Google: at most 5 minutes old; `nonce` compared with the token's when sent.
    private func verifyGoogle(_ command: ProviderV1.VerifyIdToken, app: ProviderSettings, now: Int64) throws
        -> ProviderV1.VerifiedIdentity {
        guard !app.googleClientIds.isEmpty else { throw ServiceError.providerNotConfigured }
        let invalid = ProviderErrors.invalidToken("google")
        let token = try ProviderToken(command.idToken, keys: google, provider: "google")
        guard let issuer = token.string("iss"), issuer == "accounts.google.com" || issuer == "https://accounts.google.com",
              let audience = token.audience(in: app.googleClientIds),
              token.hasValidTimes(now: now, maximumAge: 300), let subject = token.string("sub")
        else { throw invalid }
        if let sent = command.nonce {
            guard let claimed = token.string("nonce"),
                  Digest.constantTimeEqual(Array(sent.utf8), Array(claimed.utf8)) else { throw invalid }
        }
        let email = token.string("email")
        return ProviderV1.VerifiedIdentity(provider: "google", subject: subject, email: email,
                                           emailVerified: token.flag("email_verified"),
                                           firstName: token.string("given_name"), lastName: token.string("family_name"),
                                           photoUrl: token.string("picture"), audience: audience,
                                           emailAuthoritative: token.flag("email_verified")
                                               && Self.googleIsAuthority(email: email, hostedDomain: token.string("hd")))
    }

    /// Firebase: issuer and audience name the app's project; the token is valid while `exp`
    /// says so (Firebase SDKs refresh it hourly), never issued in the future.
    private func verifyFirebase(_ command: ProviderV1.VerifyIdToken, app: ProviderSettings, now: Int64) throws
        -> ProviderV1.VerifiedIdentity {
        guard let project = app.firebaseProjectId, !project.isEmpty else { throw ServiceError.providerNotConfigured }
        let invalid = ProviderErrors.invalidToken("firebase")
        let token = try ProviderToken(command.idToken, keys: firebase, provider: "firebase")
        guard token.string("iss") == "https://securetoken.google.com/" + project, token.audience(in: [project]) != nil,
              token.hasValidTimes(now: now), let subject = token.string("sub")
        else { throw invalid }
        let name = token.string("name")?.split(separator: " ", maxSplits: 1).map(String.init) ?? []
        return ProviderV1.VerifiedIdentity(provider: "firebase", subject: subject, email: token.string("email"),
                                           emailVerified: token.flag("email_verified"), phone: token.string("phone_number"),
                                           firstName: name.first, lastName: name.count > 1 ? name[1] : nil,
                                           photoUrl: token.string("picture"), audience: project,
                                           emailAuthoritative: token.flag("email_verified") && app.firebaseTrustEmailVerified)
    }

    /// Google owns gmail.com and googlemail.com addresses, and a Workspace account (`hd`) is an
    /// address of the domain Google hosts; for any other address Google only saw a
    /// confirmation mail once, which a stranger can do before the owner signs up anywhere.
    static func googleIsAuthority(email: String?, hostedDomain: String?) -> Bool {
        guard let email, let at = email.lastIndex(of: "@") else { return false }
        let domain = email[email.index(after: at)...].lowercased()
        if domain == "gmail.com" || domain == "googlemail.com" { return true }
        guard let hostedDomain, !hostedDomain.isEmpty else { return false }
        return domain == hostedDomain.lowercased()
    }
}
