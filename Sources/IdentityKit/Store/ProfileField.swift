/// The profile fields `PATCH /v1/me` may change, named as their columns.
public enum ProfileField: String, CaseIterable, Sendable {
    case firstName = "first_name"
    case lastName = "last_name"
    case photoURL = "photo_url"
    case username = "username"
    /// BCP 47, in canonical case (`LanguageTag.normalized`).
    case locale = "locale"
}
