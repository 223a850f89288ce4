import Foundation
import IdentityCredentials
import IdentityKit

/// The admin API's user commands (`identity.admin.v1`): create, update, disable/enable,
/// delete. The gateway checked every field's shape; the rules that protect the store (password
/// policy, email syntax, claim names and sizes) are checked here again, since a worker must be
/// safe on its own.
struct UserAdministration: Sendable {
    let pool: PGPool
    let users: UserStore
    let sessions: SessionStore
    let hasher: PasswordHasher
    let deletion: AccountDeletion

    func create(_ command: AdminV1.CreateUser) throws -> TokenV1.UserResult {
        if let email = command.email, !EmailAddress.isValid(email) { throw ServiceError.invalidEmail() }
        var hash: String?
        if let password = command.password {
            if let problem = PasswordPolicy.problem(with: password) { throw ServiceError.weakPassword(problem) }
            hash = try hasher.hash(password)  // before the transaction: Argon2 holds no lock
        }
        try AdminClaims.check(command.customClaimsJson, location: "body.custom_claims")
        let user = try mapConflicts {
            try pool.transaction { connection -> UserRecord in
                var new = UserStore.NewUser(email: command.email, username: command.username, firstName: command.firstName,
                                            lastName: command.lastName, passwordHash: hash)
                new.emailVerified = command.emailVerified
                new.phone = command.phone
                let created = try users.insert(new, appId: command.appId, on: connection)
                var changes = UserAdminStore.Changes()
                if !command.roles.isEmpty { changes.roles = command.roles }
                if !command.customClaimsJson.isEmpty { changes.customClaims = command.customClaimsJson }
                if !command.appMetadataJson.isEmpty { changes.appMetadata = command.appMetadataJson }
                if !command.userMetadataJson.isEmpty { changes.userMetadata = command.userMetadataJson }
                let user = changes.isEmpty
                    ? created : try UserAdminStore.update(appId: command.appId, uid: created.uid, changes, on: connection) ?? created
                try Events.userCreated(appId: command.appId, uid: user.uid, email: user.email, on: connection)
                return user
            }
        }
        return TokenV1.UserResult(user: user.message)
    }

    func update(_ command: AdminV1.UpdateUser) throws -> TokenV1.UserResult {
        if let email = command.email, !EmailAddress.isValid(email) { throw ServiceError.invalidEmail() }
        if let claims = command.customClaimsJson { try AdminClaims.check(claims, location: "body.custom_claims") }
        var changes = UserAdminStore.Changes()
        changes.email = command.email
        changes.emailVerified = command.emailVerified
        changes.phone = command.phone
        changes.username = command.username
        changes.firstName = command.firstName
        changes.lastName = command.lastName
        changes.clear = Set(command.clearFields)
        if command.setRoles { changes.roles = command.roles }
        changes.customClaims = command.customClaimsJson
        changes.appMetadata = command.appMetadataJson
        changes.userMetadata = command.userMetadataJson
        let user = try mapConflicts {
            try pool.transaction { connection -> UserRecord in
                let before = try users.find(appId: command.appId, uid: command.uid, on: connection)
                guard let user = try UserAdminStore.update(appId: command.appId, uid: command.uid, changes, on: connection)
                else { throw ServiceError.notFound }
                if let previous = before?.email, previous.lowercased() != (user.email ?? "").lowercased() {
                    // To the address it was changed from: its owner is who must hear of it.
                    try SecurityAlerts().raise(.emailChanged, appId: command.appId, uid: user.uid, context: .init(),
                                               address: previous, on: connection)
                }
                try Events.userUpdated(appId: command.appId, uid: user.uid, change: command.actor.isEmpty ? "profile" : "admin",
                                       on: connection)
                return user
            }
        }
        return TokenV1.UserResult(user: user.message)
    }

    /// Disable: in one transaction the flag, every session ended (their refresh tokens and
    /// access tokens refused from the commit on; devices unregistered), `user.disabled`, and an
    /// audit row of the security event. Enable: the flag and `user.enabled`.
    func setDisabled(_ command: AdminV1.SetUserDisabled) throws -> TokenV1.UserResult {
        let user = try pool.transaction { connection -> UserRecord in
            guard try users.lock(appId: command.appId, uid: command.uid, on: connection) else { throw ServiceError.notFound }
            var changes = UserAdminStore.Changes()
            changes.disabled = command.disabled
            guard let user = try UserAdminStore.update(appId: command.appId, uid: command.uid, changes, on: connection)
            else { throw ServiceError.notFound }
            var ended: [String] = []
            if command.disabled {
                ended = try sessions.end(appId: command.appId, uid: command.uid, sessionId: nil, reason: "user_disabled",
                                         on: connection)
            }
            try Events.userDisabled(appId: command.appId, uid: command.uid, disabled: command.disabled, on: connection)
            try AuditLog.append(appId: command.appId, AuditLog.Entry(
                actor: command.actor.isEmpty ? "system" : command.actor,
                action: command.disabled ? "user.disabled" : "user.enabled", target: "user:" + command.uid,
                ip: command.ip.isEmpty ? nil : command.ip,
                detail: .object(["sessions_ended": JSONValue(ended.count)])), on: connection)
            return user
        }
        return TokenV1.UserResult(user: user.message)
    }

    /// The user's second factors and backup codes removed (one who lost every factor), with
    /// `mfa.disabled` (admin_reset) when any was on, and the audit row either way.
    func resetMfa(_ command: AdminV1.ResetUserMfa) throws -> TokenV1.UserResult {
        let user = try pool.transaction { connection -> UserRecord in
            guard try users.lock(appId: command.appId, uid: command.uid, on: connection) else { throw ServiceError.notFound }
            let wasOn = try MfaStore(pool: pool).adminReset(appId: command.appId, uid: command.uid, on: connection)
            try AuditLog.append(appId: command.appId, AuditLog.Entry(
                actor: command.actor.isEmpty ? "system" : command.actor, action: "user.mfa_reset",
                target: "user:" + command.uid, ip: command.ip.isEmpty ? nil : command.ip,
                detail: .object(["mfa_was_enabled": .bool(wasOn)])), on: connection)
            guard let user = try users.find(appId: command.appId, uid: command.uid, on: connection) else {
                throw ServiceError.notFound
            }
            return user
        }
        return TokenV1.UserResult(user: user.message)
    }

    func delete(_ command: AdminV1.DeleteUser) throws -> AdminV1.UserDeleted {
        guard try deletion.deleteByAdmin(appId: command.appId, uid: command.uid) else { throw ServiceError.notFound }
        return AdminV1.UserDeleted(uid: command.uid)
    }

    private func mapConflicts<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch UserStore.Conflict.email {
            throw ServiceError.emailAlreadyInUse
        } catch UserStore.Conflict.username {
            throw ServiceError.usernameTaken
        }
    }
}
