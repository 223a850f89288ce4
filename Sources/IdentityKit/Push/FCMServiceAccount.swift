import Foundation

/// The fields of a Google service-account key file that FCM HTTP v1 needs: the project, the
/// account's email (the JWT-bearer assertion's `iss`), its RSA private key and the token URI.
public struct FCMServiceAccount: Sendable {
    public let projectId: String
    public let clientEmail: String
    public let privateKeyId: String?
    public let privateKeyPEM: String
    public let tokenURI: String

    public static func parse(_ json: String) -> FCMServiceAccount? {
        guard json.utf8.count <= 16 * 1024, case .object(let fields)? = JSONValue.parse(Data(json.utf8)),
              case .string(let project)? = fields["project_id"], !project.isEmpty,
              case .string(let email)? = fields["client_email"], !email.isEmpty,
              case .string(let pem)? = fields["private_key"], (try? RSAKey.fromPEM(pem)) != nil
        else { return nil }
        var tokenURI = "https://oauth2.googleapis.com/token"
        if case .string(let uri)? = fields["token_uri"], !uri.isEmpty { tokenURI = uri }
        var keyId: String?
        if case .string(let id)? = fields["private_key_id"] { keyId = id }
        return FCMServiceAccount(projectId: project, clientEmail: email, privateKeyId: keyId, privateKeyPEM: pem,
                                 tokenURI: tokenURI)
    }
}
