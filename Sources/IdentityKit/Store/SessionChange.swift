/// A committed change that ends a session or changes what the gateway answers about a user, as
/// the store's triggers announce it (migration 0038) on `SessionChange.channel`.
public enum SessionChange: Sendable, Equatable {
    /// A session ended, expired differently, or was deleted.
    case session(appId: String, sessionId: String)
    /// A user's profile, ways in or factors changed, or the user was deleted.
    case user(appId: String, uid: String)

    public static let channel = "identity_session_changes"

    /// The change a notification's payload (`{"k": "s"|"u", "a": app_id, "id": …}`) names; nil
    /// for anything else.
    public static func parse(_ payload: String) -> SessionChange? {
        guard let object = try? JSONParser.parse(Array(payload.utf8)),
              case .string(let kind)? = object["k"], case .string(let app)? = object["a"],
              case .string(let id)? = object["id"] else { return nil }
        switch kind {
        case "s": return .session(appId: app, sessionId: id)
        case "u": return .user(appId: app, uid: id)
        default: return nil
        }
    }
}
