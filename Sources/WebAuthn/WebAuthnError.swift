/// Why a WebAuthn response was refused. The reason goes to the log, never to the client
/// (which sees one `auth/invalid-passkey`): telling an attacker which check failed helps them.
public enum WebAuthnError: Error, Sendable, Equatable {
    /// Bytes that do not parse as what they claim to be.
    case malformed(String)
    /// Well formed, but a relying-party check failed.
    case refused(String)
    /// A key type, algorithm or attestation format this service does not take.
    case unsupported(String)

    public var reason: String {
        switch self {
        case .malformed(let why): return "malformed: " + why
        case .refused(let why): return "refused: " + why
        case .unsupported(let why): return "unsupported: " + why
        }
    }
}
