import Foundation

/// Imports users with the password hashes, provider identities and profile they had in
/// another system. One implementation for `identityctl users import FILE.jsonl` and
/// `POST /v1/admin/users/import`: each user is validated, then written in a transaction of its
/// own savepoint with its identities and its `user.created` event (one transaction per call),
/// so one refused user (a taken email, a bad hash) never leaves half a user behind and never
/// stops the others.
///
/// Here: the bound the gateway checks a request against. Validating and writing users (password
/// hashes included) is IdentityCredentials' part (`UserImport+Run.swift`).
public struct UserImport: Sendable {
    /// Users one call (one API request, one chunk of a file) may carry.
    public static let maximumPerCall = 1000

    package let pool: PGPool

    public init(pool: PGPool) { self.pool = pool }
}
