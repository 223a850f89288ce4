import IdentityCredentials
import IdentityKit

/// Reads a user's ways in (`WaysIn`) on the caller's connection. The caller holds the user's
/// row lock (`UserStore.lock`) in its transaction, so two removals at once queue there and the
/// second counts what the first left: neither can take the other's last way in.
struct WaysInReader: Sendable {
    let passkeys: PasskeyStore
    let phones: UserPhoneStore
    let sms: SmsSettingsStore

    func ways(of user: UserRecord, on connection: PGConnection) throws -> WaysIn {
        let phone = try phones.verified(appId: user.appId, uid: user.uid, on: connection)
        let allowed = phone == nil ? [] : try sms.settings(appId: user.appId, on: connection).allowedCallingCodes
        return WaysIn(password: user.passwordHash != nil, providers: user.identityProviders.count,
                      passkeys: try passkeys.count(appId: user.appId, uid: user.uid, on: connection),
                      phone: WaysIn.phoneCounts(verified: phone, allowedCallingCodes: allowed),
                      email: user.emailVerified && !(user.email ?? "").isEmpty)
    }

    /// 409 `auth/last-sign-in-method` unless the user keeps a way in after losing one.
    func requireAnother(_ user: UserRecord, on connection: PGConnection) throws {
        guard try ways(of: user, on: connection).oneMayGo else { throw ServiceError.lastSignInMethod }
    }
}
