/// A committed change that ends a session or changes what the gateway answers about a user, as
/// the store's triggers announce it (migration 0038) on `SessionChange.channel`.
public enum SessionChange: Sendable, Equatable {
    /// A session ended, expired differently, or was deleted.
    case session(appId: String, sessionId: String)
    /// A user's profile, ways in or factors changed, or the user was deleted.
    case user(appId: String, uid: String)
    /// A gateway's own marker (`{"k": "sync", "id": marker}`): every change committed before it
    /// has been heard once it arrives, since notifications come in commit order.
    case sync(marker: String)

    public static let channel = "identity_session_changes"

    /// The payload of a sync marker (markers are made of letters, digits, `_` and `-`).
    public static func syncPayload(_ marker: String) -> String { #"{"k":"sync","id":"\#(marker)"}"# }

    /// The change a notification's payload (`{"k": "s"|"u", "a": app_id, "id": …}`) names; nil
    /// for anything else.
    public static func parse(_ payload: String) -> SessionChange? {
        guard let object = try? JSONParser.parse(Array(payload.utf8)),
              case .string(let kind)? = object["k"], case .string(let id)? = object["id"] else { return nil }
        if kind == "sync" { return .sync(marker: id) }
        guard case .string(let app)? = object["a"] else { return nil }
        switch kind {
        case "s": return .session(appId: app, sessionId: id)
        case "u": return .user(appId: app, uid: id)
        default: return nil
        }
    }
}
