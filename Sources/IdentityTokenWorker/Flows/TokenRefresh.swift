import IdentityCredentials
import IdentityKit

/// `identity.token.v1.Refresh`: refresh-token rotation with a grace period and theft detection
/// (docs/api-contract.md, "Tokens and sessions").
///
/// The successor of a token is derived from it: `rt_` + base64url(HMAC(key, token)), with a
/// key only token workers hold. So the database keeps hashes only, yet a retry of a spent token
/// within the grace period (a lost answer, parallel refreshes, a worker killed after its
/// commit) is answered with the very same successor.
struct TokenRefresh: Sendable {
    let pool: PGPool
    let users: UserStore
    let sessions: SessionStore
    let issuer: SessionIssuer
    let successorKey: [UInt8]
    let graceSeconds: Int
    let lifetimeSeconds: Int

    private enum Outcome {
        case issue(uid: String, sessionId: String, assurance: Assurance)
        case refuse(ServiceError)
    }

    func handle(_ command: TokenV1.Refresh) throws -> TokenV1.AuthResult {
        let presented = command.refreshToken
        guard presented.hasPrefix("rt_"), presented.utf8.count <= 128 else { throw ServiceError.refreshTokenRevoked }
        let signingKey = try issuer.signingKey(appId: command.appId)
        let presentedHash = Digest.sha256(presented)
        let successor = "rt_" + Base64URL.encode(Digest.hmacSHA256(key: successorKey, Array(presented.utf8)))
        let successorHash = Digest.sha256(successor)
        // The common cases in one round trip: a live token rotated, a retry within the grace
        // answered, a dead token refused. Only what ends a session goes the transactional way.
        guard let fast = try sessions.rotateIfLive(appId: command.appId, presentedHash: presentedHash,
                                                   successorHash: successorHash, graceSeconds: graceSeconds,
                                                   lifetimeSeconds: lifetimeSeconds, ip: command.client?.ip ?? "",
                                                   userAgent: command.client?.userAgent ?? "")
        else { throw ServiceError.refreshTokenRevoked }
        let token = fast.state
        // Disabling ends every session; its tokens then say why (403), as the locked path does.
        if token.userDisabled { throw ServiceError.userDisabled }
        let answerable = fast.rotated
            || (token.spent && token.withinGrace && !token.sessionEnded && !token.pastLifetime
                && Digest.constantTimeEqual(token.successorHash, successorHash))
        if answerable {
            return try issue(user: fast.user, sessionId: token.sessionId,
                             assurance: Assurance(amr: token.amr, aal: token.aal), successor: successor,
                             signingKey: signingKey)
        }
        if token.sessionEnded { throw ServiceError.refreshTokenRevoked }
        if !token.spent && !token.pastLifetime && token.expired { throw ServiceError.refreshTokenExpired }
        return try handleEnding(command, presentedHash: presentedHash, successor: successor,
                                successorHash: successorHash, signingKey: signingKey)
    }

    /// A session past its lifetime or a stolen token: the locked transaction that ends the
    /// session (and re-decides from scratch, the row may have moved since the fast path read it).
    private func handleEnding(_ command: TokenV1.Refresh, presentedHash: [UInt8], successor: String,
                              successorHash: [UInt8], signingKey: SigningKeyCache.Entry) throws -> TokenV1.AuthResult {
        // The transaction commits in every case, theft included: ending the session must stick
        // even though this call answers with an error.
        let outcome: Outcome = try pool.transaction { connection in
            guard let token = try sessions.lockRefreshToken(appId: command.appId, hash: presentedHash,
                                                            graceSeconds: graceSeconds, on: connection)
            else { return .refuse(.refreshTokenRevoked) }
            // Disabling ended the session too; the caller learns why (issue 16: refresh 403).
            if token.userDisabled { return .refuse(.userDisabled) }
            guard !token.sessionEnded else { return .refuse(.refreshTokenRevoked) }
            // However often it refreshed, a session ends at its app's absolute lifetime.
            if token.pastLifetime {
                _ = try sessions.end(appId: command.appId, uid: token.uid, sessionId: token.sessionId,
                                     reason: "session_expired", on: connection)
                return .refuse(.sessionExpired)
            }
            if !token.spent {
                guard !token.expired else { return .refuse(.refreshTokenExpired) }
                try sessions.rotate(appId: command.appId, sessionId: token.sessionId, spentHash: presentedHash,
                                    successorHash: successorHash, lifetimeSeconds: lifetimeSeconds,
                                    ip: command.client?.ip ?? "", userAgent: command.client?.userAgent ?? "",
                                    on: connection)
                return .issue(uid: token.uid, sessionId: token.sessionId, assurance: Assurance(amr: token.amr, aal: token.aal))
            }
            if token.withinGrace && Digest.constantTimeEqual(token.successorHash, successorHash) {
                return .issue(uid: token.uid, sessionId: token.sessionId, assurance: Assurance(amr: token.amr, aal: token.aal))
            }
            // A spent token after the grace period: someone else holds a copy. End the session.
            _ = try sessions.end(appId: command.appId, uid: token.uid, sessionId: token.sessionId,
                                 reason: "refresh_token_reuse", on: connection)
            try Events.refreshTokenReuseDetected(appId: command.appId, uid: token.uid, sessionId: token.sessionId,
                                                 on: connection)
            ServiceMetrics.reuseDetections.inc(Metrics.shared.appLabel(command.appId))
            try AuditLog.append(appId: command.appId, AuditLog.Entry(
                actor: "system", action: "refresh_token.reuse_detected", target: "user:" + token.uid,
                ip: command.client?.ip.isEmpty == false ? command.client?.ip : nil,
                detail: .object(["session_id": .string(token.sessionId)])), on: connection)
            Log.warning("refresh token reuse: session ended",
                        ["app_id": command.appId, "session_id": token.sessionId])
            return .refuse(.refreshTokenRevoked)
        }
        switch outcome {
        case .refuse(let error):
            throw error
        case .issue(let uid, let sessionId, let assurance):
            return try issue(user: users.find(appId: command.appId, uid: uid), sessionId: sessionId, assurance: assurance,
                             successor: successor, signingKey: signingKey)
        }
    }

    private func issue(user: UserRecord?, sessionId: String, assurance: Assurance, successor: String,
                       signingKey: SigningKeyCache.Entry) throws -> TokenV1.AuthResult {
        guard let user else { throw ServiceError.refreshTokenRevoked }
        guard !user.disabled else { throw ServiceError.userDisabled }
        return try issuer.result(for: user, sessionId: sessionId, refreshToken: successor, assurance: assurance,
                                 isNewUser: false, signingKey: signingKey, trigger: "refresh")
    }
}
