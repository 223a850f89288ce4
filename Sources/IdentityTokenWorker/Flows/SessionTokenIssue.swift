import Foundation
import IdentityCredentials
import IdentityKit

/// Gives a session just started its opaque session token (`SessionToken`), for apps whose
/// profile has them. The command carries that session's access token (`ActsForUser`), so only
/// whoever just signed in can ask, and a session gets one token, once.
struct SessionTokenIssue: Sendable {
    let pool: PGPool
    let tokens: SessionTokenStore

    func handle(_ command: TokenV1.IssueSessionToken, messageAppId: String) throws -> TokenV1.SessionTokenIssued {
        guard command.appId == messageAppId, !command.sessionId.isEmpty else { throw ServiceError.invalidToken }
        let token = SessionToken.new()
        try pool.transaction { connection in
            guard try tokens.profileHasSessionTokens(appId: command.appId, on: connection) else {
                throw ServiceError.invalidToken
            }
            guard try tokens.issue(appId: command.appId, sessionId: command.sessionId, uid: command.uid,
                                   hash: SessionToken.hash(token), on: connection)
            else { throw ServiceError.invalidToken }
        }
        return TokenV1.SessionTokenIssued(sessionToken: token)
    }
}
