import IdentityKit

/// Ends the session of a session token the gateway found idle (`TokenVerifier`): the request
/// is refused at once, and the session is ended like a sign-out (`session.revoked` with reason
/// `idle_timeout`, its push devices unregistered) by the revocation worker, the process that
/// ends sessions. The command carries the idle session's own token as its caller token, the
/// authority a sign-out has. Nobody waits for the answer: until it commits, the gateway keeps
/// refusing the token (its session stays idle, since only a live session is marked seen), and a
/// second command for the same session ends nothing more.
struct IdleSessionEnding: Sendable {
    let bus: BusClient
    let timeout: Double

    func end(_ claims: AccessTokenClaims, token: String) {
        let command = RevocationV1.EndSession(appId: claims.aud, uid: claims.sub, sessionId: claims.sid,
                                              reason: "idle_timeout")
        let fields = ["app_id": claims.aud, "session_id": claims.sid]
        bus.request(command, queue: BusTopology.revocationCommands, appId: claims.aud,
                    requestId: Identifiers.prefixed("req"), callerToken: token, timeout: timeout) { result in
            if case .failure = result { Log.warning("idle session not ended (it stays refused)", fields) }
        }
    }
}
