/// The rules a new password must meet (PRODUCT.md: 8 to 256 characters, not a very common
/// password). Checked before any hashing, so an oversized password costs no hash work.
public enum PasswordPolicy {
    public static let minimumLength = 8
    public static let maximumLength = 256

    /// Why `password` is refused, or nil when it is acceptable.
    public static func problem(with password: String) -> String? {
        // Characters as the OpenAPI document's minLength/maxLength count them (Unicode scalars).
        let length = password.unicodeScalars.count
        if length < minimumLength { return "must be at least \(minimumLength) characters" }
        if length > maximumLength { return "must be at most \(maximumLength) characters" }
        if commonPasswords.contains(password.lowercased()) { return "is too common" }
        return nil
    }

    /// The most common passwords of at least 8 characters in public breach lists.
    static let commonPasswords: Set<String> = [
        "password", "password1", "password12", "password123", "password1234", "passw0rd", "p@ssw0rd",
        "12345678", "123456789", "1234567890", "12345678910", "87654321", "11111111", "00000000",
        "qwertyui", "qwerty123", "qwertyuiop", "1q2w3e4r", "1q2w3e4r5t", "1qaz2wsx", "zaq12wsx",
        "iloveyou", "iloveyou1", "sunshine", "princess", "football", "baseball", "welcome1",
        "welcome123", "abc12345", "abcd1234", "admin123", "letmein1", "trustno1", "superman",
        "starwars", "whatever", "dragon123", "monkey123", "computer", "internet", "michelle",
        "jennifer", "charlie1", "asdfghjk", "asdf1234", "changeme", "qazwsxedc", "aa123456",
        "a1234567", "12341234", "11223344", "123123123", "123qweasd", "q1w2e3r4", "q1w2e3r4t5",
    ]
}
