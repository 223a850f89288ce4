/// Which sessions a command ends, for the rule of an app whose `session_end_proof` is `fresh`
/// (`CallerAuthority.check`): ending the caller's own session never needs a fresh sign-in,
/// ending another one or all of them does.
public enum SessionEnding: Sendable, Equatable {
    case one(sessionId: String)
    case all
}

extension RevocationV1.EndSession {
    public var ending: SessionEnding { .one(sessionId: sessionId) }
}

extension RevocationV1.EndAllSessions {
    public var ending: SessionEnding { .all }
}
