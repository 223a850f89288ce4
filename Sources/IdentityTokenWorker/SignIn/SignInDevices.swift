import IdentityCredentials
import IdentityKit

/// The device token a password sign-in answers with (`SignInDeviceStore`): what lets this device
/// sign in again once a guesser has spent the identifier's budget.
struct SignInDevices: Sendable {
    let store: SignInDeviceStore
    /// Derives tokens from command ids (like first refresh tokens), so a redelivered sign-in is
    /// answered with the token its first run stored.
    let key: [UInt8]

    /// The token of this command: unguessable, stored only as a hash, the same on redelivery.
    func token(_ command: CommandContext) -> String {
        guard !command.id.isEmpty else { return Identifiers.secret("dt") }
        return SignInDeviceStore.prefix + Base64URL.encode(Digest.hmacSHA256(key: key, Array(command.id.utf8)))
    }

    /// Inside the sign-in's transaction: records this sign-in's token for the user in place of
    /// the one it came with, and returns it. Every profile gets one: the standard answer shows
    /// it, the session-object edge keeps it in a cookie for its cookie transport (its other
    /// answers, like the single-token profile's, are rebuilt field by field and leave it out).
    func issue(for user: UserRecord, presented: String, command: CommandContext, on connection: PGConnection) throws -> String {
        let token = token(command)
        try store.issue(appId: user.appId, uid: user.uid, token: token, replacing: presented, on: connection)
        return token
    }

    /// The token a redelivered sign-in's first run stored, or "" when it stored none.
    func replayed(appId: String, uid: String, command: CommandContext) throws -> String {
        guard !command.id.isEmpty else { return "" }
        let token = token(command)
        return try store.isStored(appId: appId, uid: uid, token: token) ? token : ""
    }
}
