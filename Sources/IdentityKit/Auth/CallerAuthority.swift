import Foundation

/// A command that acts for one user (changes their profile, ends their session, upgrades their
/// guest account…) has the gateway's word for who that user is: the gateway verified a bearer
/// token. The gateway is not the only process that can publish to a worker's queue (the provider
/// worker and the token worker write to the default exchange too), so that word alone would let
/// any of them act for any user. The gateway therefore forwards the caller's access token with
/// the command (the `caller_token` header, `OutgoingMessage.callerToken`) and the worker checks it
/// again with the same `TokenVerifier`: signed by the app's key, not expired, for this app, for
/// this user (and session, where the command names one). Whoever lacks the user's token cannot
/// make a worker act for that user; a refusal is logged and answered 401.
///
/// The one other authority over a user is the app's backend: an admin API call forwards the
/// app's secret key instead (`sk_…`, checked through `secret_key_owner` without reading any
/// hash), which may act for any user of that app and of no other. The web console's admin
/// commands forward the console user's own session token of the console app instead, and count
/// only with that user's role in the command's app (`ConsoleStore`): owner or admin to change
/// anything, a viewer only to read the settings, the webhook endpoints and their delivery logs,
/// and a user's passkeys; and, when the console requires two-step verification, only from a
/// session signed in with it. An owner's or admin's console session token also passes `check`
/// for any user of that app, as the secret key does: the console ends a user's sessions with
/// the admin API's own revocation command.
///
/// Not checked here: that the session is still live. The gateway checks that before sending, and
/// the flows that depend on it (linking's recent sign-in, device registration) check it again in
/// their own transaction.
public struct CallerAuthority: Sendable {
    let verifier: TokenVerifier
    let apps: AppStore
    let secretKeys: SecretKeyStore
    let console: ConsoleStore

    public init(apps: AppStore, secretKeys: SecretKeyStore) {
        self.apps = apps
        self.secretKeys = secretKeys
        console = ConsoleStore(pool: apps.pool)
        verifier = TokenVerifier(store: apps)
    }

    /// Throws 401 (after logging why) unless `message` carries a live secret key of `appId`: the
    /// authority of an admin API call (the app's backend), which no user token gives.
    public func checkAppBackend(_ message: BusMessage, appId: String) throws {
        if SessionToken.isSessionToken(message.callerToken) {
            return try checkConsoleUser(message, appId: appId)
        }
        guard message.callerToken.hasPrefix("sk_"),
              let owner = try secretKeys.owner(ofKey: message.callerToken), owner.app.id == appId else {
            Log.warning("admin command refused: it does not carry the app's secret key",
                        ["app_id": appId, "type": message.type, "request_id": message.requestId])
            throw ServiceError.invalidToken
        }
    }

    /// A console user's session token (of the console app, live, the user not disabled) whose
    /// verified email holds a role in `appId` that allows the command: reading the settings (an
    /// empty settings update) for any role, everything else for owners and admins.
    private func checkConsoleUser(_ message: BusMessage, appId: String) throws {
        let fields = ["app_id": appId, "type": message.type, "request_id": message.requestId]
        func refuse(_ why: String) -> ServiceError {
            Log.warning("admin command refused: not a console user allowed in the app", fields.merging(["why": why]) { $1 })
            return ServiceError.invalidToken
        }
        let session = try consoleSession(message, refuse: refuse)
        guard let role = try console.role(consoleAppId: session.consoleId, uid: session.claims.sub, appId: appId) else {
            throw refuse("no role in the app")
        }
        guard role.mayChange || Self.readsOnly(message) else { throw refuse("role \(role.rawValue) may not change") }
        // What can hand over the app's accounts or mail takes a recent sign-in, as the console
        // asks before sending it; one published straight to the queue meets the same rule.
        if Self.needsFreshSignIn(message),
           Int64(Timestamp.nowSeconds()) - session.claims.iat > Int64(StepUpWindow.seconds) {
            Log.warning("admin command refused: a console session older than the step-up window", fields)
            throw ServiceError.reauthRequired
        }
    }

    /// The console's commands that take a sign-in of the last `StepUpWindow.seconds`: a
    /// settings change that can hand over accounts or mail (`AppSettingsUpdate.handsOverAccounts`),
    /// a webhook endpoint made, re-pointed, deleted or given a new secret, a key rotated, a user
    /// deleted or their second factors reset.
    static func needsFreshSignIn(_ message: BusMessage) -> Bool {
        switch message.type {
        case AdminV1.RotateSecretKey.protoName, AdminV1.RotateSigningKey.protoName, AdminV1.DeleteUser.protoName,
             AdminV1.ResetUserMfa.protoName:
            return true
        case AdminV1.ManageWebhooks.protoName:
            guard let command = try? ProtoJSON.decode(AdminV1.ManageWebhooks.self, from: message.body) else { return true }
            return ["create", "update", "delete", "rotate_secret"].contains(command.action)
        case AdminV1.UpdateAppSettings.protoName:
            guard let command = try? ProtoJSON.decode(AdminV1.UpdateAppSettings.self, from: message.body),
                  case .value(let body) = JSONValue.parseBody(Data(command.settingsJson.utf8)) else { return true }
            return AppSettingsUpdate.parse(body).0.handsOverAccounts
        default:
            return false
        }
    }

    /// The role in `appId` of the console user whose session token `message` carries, nil when
    /// they hold none; throws `refuse(why)` when the token is no live console session.
    private func consoleRole(_ message: BusMessage, appId: String, refuse: (String) -> ServiceError) throws
        -> ConsoleStore.Role? {
        let session = try consoleSession(message, refuse: refuse)
        return try console.role(consoleAppId: session.consoleId, uid: session.claims.sub, appId: appId)
    }

    /// The console session whose token `message` carries: verified against the console app, and
    /// signed in strongly enough for the console's rule. Every console command passes here.
    private func consoleSession(_ message: BusMessage, refuse: (String) -> ServiceError) throws
        -> (consoleId: String, claims: AccessTokenClaims) {
        guard let consoleId = try console.consoleAppId(), let consoleApp = try apps.find(id: consoleId) else {
            throw refuse("no console app")
        }
        let claims: AccessTokenClaims
        do {
            claims = try verifier.verify(authorization: "Bearer " + message.callerToken, app: consoleApp)
        } catch {
            throw refuse("session token does not verify")
        }
        // The gateway shows such a session only its Account page; a command it carries anyway
        // (published straight to the queue) is refused the same way.
        if try console.requiresStrongSignIn(), !ConsoleStore.isStrongSignIn(amr: claims.amr) {
            throw refuse("the console requires two-step verification and this session signed in without it")
        }
        return (consoleId, claims)
    }

    /// A console owner's command (`CONSOLE_OWNER`, the Members page): `message` carries the
    /// session token of console user `uid` (of the console app), whose verified email holds
    /// `owner` in `appId`. Throws 401 when the token is not that console user's, 403
    /// `auth/console-owner-required` when they hold another role there or none.
    public func checkConsoleOwner(_ message: BusMessage, appId: String, uid: String) throws {
        let fields = ["app_id": appId, "type": message.type, "request_id": message.requestId]
        func refuse(_ why: String) -> ServiceError {
            Log.warning("console member change refused", fields.merging(["why": why]) { $1 })
            return ServiceError.invalidToken
        }
        guard SessionToken.isSessionToken(message.callerToken) else { throw refuse("no console session token") }
        guard message.appId.isEmpty || message.appId == appId else { throw refuse("message app differs from the command's") }
        let session = try consoleSession(message, refuse: refuse)
        guard appId != session.consoleId else { throw refuse("the console app itself") }
        guard session.claims.sub == uid else { throw refuse("token of another console user") }
        guard try console.role(consoleAppId: session.consoleId, uid: uid, appId: appId) == .owner else {
            Log.warning("console member change refused", fields.merging(["why": "not an owner of the app"]) { $1 })
            throw ServiceError.consoleOwnerRequired
        }
    }

    /// What a viewer may send: an `UpdateAppSettings` that changes nothing (the settings read),
    /// a read of the app's webhook endpoints (the list, one endpoint, its delivery log) or of a
    /// user's passkeys.
    static func readsOnly(_ message: BusMessage) -> Bool {
        if message.type == AdminV1.ListUserPasskeys.protoName { return true }
        if message.type == AdminV1.ManageWebhooks.protoName,
           let command = try? ProtoJSON.decode(AdminV1.ManageWebhooks.self, from: message.body) {
            return ["list", "get", "deliveries"].contains(command.action)
        }
        guard message.type == AdminV1.UpdateAppSettings.protoName,
              let command = try? ProtoJSON.decode(AdminV1.UpdateAppSettings.self, from: message.body) else { return false }
        return JSONValue.parse(Data(command.settingsJson.utf8)) == .object([:])
    }

    /// The verified claims when `message` carries an access token of `appId` for `uid` (and for
    /// `sessionId` when one is given), nil when it carries a live secret key of `appId` (or, with
    /// `consoleAdmins`, for a command the admin API also sends, a console owner's or admin's
    /// session token for `appId`), else throws 401 `auth/invalid-token` after logging why.
    /// `ending`: the command ends sessions; a user's command that ends another of their sessions
    /// (or all) in an app whose `session_end_proof` is `fresh` needs a session signed in within
    /// the step-up window, else 403 `auth/reauth-required`, as the gateway answers it.
    @discardableResult
    public func check(_ message: BusMessage, appId: String, uid: String, sessionId: String? = nil,
                      consoleAdmins: Bool = false, ending: SessionEnding? = nil) throws -> AccessTokenClaims? {
        let fields = ["app_id": appId, "type": message.type, "request_id": message.requestId]
        func refuse(_ why: String) -> ServiceError {
            Log.warning("command refused: it does not carry the acting user's access token", fields.merging(["why": why]) { $1 })
            return ServiceError.invalidToken
        }
        guard !message.callerToken.isEmpty else { throw refuse("no caller token") }
        guard message.appId.isEmpty || message.appId == appId else { throw refuse("message app differs from the command's") }
        if message.callerToken.hasPrefix("sk_") {
            guard let owner = try secretKeys.owner(ofKey: message.callerToken), owner.app.id == appId else {
                throw refuse("not a live secret key of the app")
            }
            return nil
        }
        guard let app = try apps.find(id: appId) else { throw refuse("unknown app") }
        let claims: AccessTokenClaims
        do {
            claims = try verifier.verify(authorization: "Bearer " + message.callerToken, app: app)
        } catch let error as ServiceError where error.code == ServiceError.tokenExpired.code {
            throw refuse("caller token expired")
        } catch {
            // Not the app's own token: a console owner's or admin's session token of the
            // console app stands for the app's backend, as the secret key does (the console's
            // Users page ends sessions with the admin API's command).
            if consoleAdmins, SessionToken.isSessionToken(message.callerToken), appId != (try console.consoleAppId()),
               let role = try? consoleRole(message, appId: appId, refuse: refuse), role.mayChange {
                return nil
            }
            throw refuse("caller token does not verify")
        }
        guard claims.sub == uid else { throw refuse("token of another user") }
        if let sessionId, !sessionId.isEmpty, claims.sid != sessionId { throw refuse("token of another session") }
        if let ending, app.sessionEndNeedsFreshSignIn, ending != .one(sessionId: claims.sid) {
            let age = try SessionStore(pool: apps.pool).assurance(appId: appId, sessionId: claims.sid, uid: uid)?.ageSeconds
            guard let age, age < StepUpWindow.seconds else {
                Log.warning("command refused: ending other sessions takes a fresh sign-in in this app", fields)
                throw ServiceError.reauthRequired
            }
        }
        return claims
    }
}
