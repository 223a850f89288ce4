/// The 401 each provider's failed verification answers with (docs/api-contract.md, "Sign-in
/// methods").
public enum ProviderErrors {
    public static func invalidToken(_ provider: String) -> ServiceError {
        switch provider {
        case "apple":
            ServiceError(code: "auth/invalid-apple-token", status: 401, detail: "The Apple identity token or nonce is invalid.")
        case "google":
            ServiceError(code: "auth/invalid-google-token", status: 401, detail: "The Google id token is invalid.")
        default:
            ServiceError(code: "auth/invalid-id-token", status: 401, detail: "The id token is invalid.")
        }
    }
}
