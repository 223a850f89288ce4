import IdentityKit

/// The one place every first factor ends (ARCHITECTURE.md, "Seams": one sign-in outcome).
/// A flow proves who the user is, then hands the user and what it proved to `decide`, inside
/// its own transaction; `decide` starts the session, recording the assurance reached (`amr`,
/// `aal`) on it. `answer`, after the commit, turns the decision into the reply. No flow mints
/// tokens itself, so a rule about sign-ins (a second factor first, say) is made here once.
struct SignInOutcome: Sendable {
    let issuer: SessionIssuer

    /// What the flow's transaction committed.
    enum Decision: Sendable {
        /// A session began: tokens follow.
        case session(SessionIssuer.Started, Assurance)
    }

    /// Decides, inside the flow's transaction, what this sign-in earns.
    func decide(for user: UserRecord, by firstFactor: Assurance, client: CommonV1.ClientInfo?,
                command: CommandContext, createdAccount: Bool, on connection: PGConnection) throws -> Decision {
        .session(try issuer.start(for: user, assurance: firstFactor, client: client, command: command,
                                  createdAccount: createdAccount, on: connection), firstFactor)
    }

    /// The reply for a committed decision.
    func answer(_ decision: Decision, for user: UserRecord, isNewUser: Bool,
                signingKey: SigningKeyCache.Entry) throws -> TokenV1.AuthResult {
        switch decision {
        case .session(let started, let assurance):
            return try issuer.result(for: user, started: started, assurance: assurance, isNewUser: isNewUser,
                                     signingKey: signingKey)
        }
    }

    /// The answer a redelivered sign-in command already earned (see `SessionIssuer.replay`).
    func replay(_ command: CommandContext, appId: String, users: UserStore) throws -> TokenV1.AuthResult? {
        try issuer.replay(command, appId: appId, users: users)
    }

    /// The app's signing key, fetched before a flow writes anything.
    func signingKey(appId: String) throws -> SigningKeyCache.Entry { try issuer.signingKey(appId: appId) }
}
